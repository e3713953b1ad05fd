"""Tools that work in bands of rows (to bound their memory) give exactly what the whole-image operation gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw, ImageFilter
from trompe_analysis import channels, colors
from trompe_analysis.colors import isolate
from trompe_analysis.channels import channel_values, gaussian_blur
from trompe_draw import images, marks
from trompe_draw.images import blend
from trompe_draw.marks import composite

from imagekit import noise

sizes = st.tuples(st.integers(1, 60), st.integers(1, 300))
modes = st.sampled_from(["RGB", "RGBA"])


@pytest.fixture(autouse=True)
def small_bands(monkeypatch):
    """Bands of 1,000 pixels, so small images are cut into many bands, as 50 MP images are."""
    for module in (channels, colors, marks):
        monkeypatch.setattr(module, "LUMA_BLOCK", 1000)
    for module in (channels, marks, images):
        monkeypatch.setattr(module, "NUMPY_BLOCK", 1000)


@settings(max_examples=60, deadline=None)
@given(size=sizes, mode=modes, seed=st.integers(0, 2**32 - 1),
       radius=st.sampled_from([0.5, 0.7, 1, 2.3, 8, 13.6, 40, 200]))
def test_a_banded_blur_is_pillows_blur(size, mode, seed, radius):
    im = noise(size, mode, seed)
    soft = ImageFilter.GaussianBlur(radius)
    whole = im.convert("RGBa").filter(soft).convert("RGBA") if mode == "RGBA" else im.filter(soft)
    assert gaussian_blur(im, radius).tobytes() == whole.tobytes()


@settings(max_examples=40, deadline=None)
@given(size=sizes, mode=modes, seed=st.integers(0, 2**32 - 1), channel=st.sampled_from(list("RGBHSVL")))
def test_banded_channel_values_are_the_whole_array_values(size, mode, seed, channel):
    im = noise(size, mode, seed)
    assert np.array_equal(channel_values(im, channel), channel_values(np.asarray(im)[..., :3], channel))


@settings(max_examples=40, deadline=None)
@given(size=sizes, mode=modes, seed=st.integers(0, 2**32 - 1), alpha=st.integers(1, 255))
def test_a_banded_composite_is_the_whole_alpha_composite(size, mode, seed, alpha):
    im = noise(size, mode, seed)
    layer = Image.new("RGBA", im.size, (0, 0, 0, 0))
    ImageDraw.Draw(layer).line([(0, 0), im.size], fill=(255, 0, 0, alpha), width=3)
    whole = Image.alpha_composite(im.convert("RGBA"), layer).convert(mode)
    assert composite(im.copy(), layer, "image").tobytes() == whole.tobytes()


@settings(max_examples=60, deadline=None)
@given(size=sizes, mode=modes, seed=st.integers(0, 2**32 - 1), opacity=st.floats(0, 1),
       alpha=st.sampled_from([None, 0, 1, 128, 254, 255]))
def test_overlay_blending_is_the_float_formula(size, mode, seed, opacity, alpha):
    """Whether read from the one-alpha table or worked out in bands: the pixels of the float64 formula over the
    whole region (the way overlay_images computed them before)."""
    region = np.asarray(noise(size, mode, seed)).copy()
    top = np.asarray(noise(size, "RGBA", seed + 1)).copy()
    if alpha is not None:  # one alpha over the whole overlay, as an opaque one has
        top[..., 3] = alpha
    whole = region.copy()
    a = opacity * top.astype(np.float64)[..., 3:4] / 255
    whole[..., :3] = np.floor(region[..., :3] * (1 - a) + top[..., :3].astype(np.float64) * a + 0.5).astype(np.uint8)
    blend(region, top, opacity)
    assert np.array_equal(region, whole)


@settings(max_examples=60, deadline=None)
@given(size=sizes, mode=modes, seed=st.integers(0, 2**32 - 1), target=st.tuples(*[st.integers(0, 255)] * 3),
       tolerance=st.sampled_from([0, 1, 40, 127, 200, 255]), keep=st.booleans())
def test_isolating_a_colour_is_the_numpy_comparison(size, mode, seed, target, tolerance, keep):
    """Pillow's tables, band by band, give the mask, count and dimmed pixels of the whole-array comparison (the
    way isolate_color computed them before)."""
    im = noise(size, mode, seed)
    pixels = np.asarray(im)
    match = (np.abs(pixels[..., :3].astype(np.int16) - np.array(target, np.int16)) <= tolerance).all(axis=-1)
    out, matched = isolate(im, target, tolerance, keep)
    if keep:
        expected = pixels.copy()
        expected[~match, :3] = np.floor(expected[~match, :3] * colors.DIM + 0.5).astype(np.uint8)
    else:
        expected = match.astype(np.uint8) * 255
    assert matched == match.sum() and out.mode == (mode if keep else "L")
    assert np.array_equal(np.asarray(out), expected)
