"""The result PNG encoder and the preview: what a model and a client receive must be the exact pixels."""

from __future__ import annotations

import io

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from PIL import Image

from trompe_server.encode import encode_png, preview
from trompe_server.imageio import to_rgb

CHANNELS = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}


def decoded(data: bytes) -> Image.Image:
    im = Image.open(io.BytesIO(data), formats=["PNG"])
    im.load()
    return im


@st.composite
def images(draw) -> Image.Image:
    """Noise, flat areas and smooth ramps (each stresses the row filter and deflate differently), any mode."""
    mode = draw(st.sampled_from(sorted(CHANNELS)))
    height, width = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    shape = (height, width, CHANNELS[mode])
    kind = draw(st.sampled_from(["noise", "flat", "ramp"]))
    if kind == "noise":
        pixels = draw(hnp.arrays(np.uint8, shape))
    elif kind == "flat":
        pixels = np.full(shape, draw(st.integers(0, 255)), np.uint8)
    else:
        pixels = (np.add.outer(np.arange(height), np.arange(width))[..., None] * draw(st.integers(1, 97))
                  + np.arange(shape[2])).astype(np.uint8)  # wraps past 255: large row-to-row steps
    return Image.fromarray(pixels.squeeze(-1) if mode == "L" else pixels, mode)


@settings(max_examples=150, deadline=None)
@given(images())
def test_any_image_decodes_to_identical_pixels(im):
    back = decoded(encode_png(im))
    assert back.mode == im.mode and back.size == im.size
    assert np.array_equal(np.asarray(back), np.asarray(im))


def test_a_camera_sized_image_round_trips():
    """One large image (several deflate blocks, a single IDAT chunk of megabytes)."""
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, (1200, 1600, 3), dtype=np.uint8)
    pixels[300:900] //= 16  # half noise, half low-entropy rows
    data = encode_png(Image.fromarray(pixels))
    assert np.array_equal(np.asarray(decoded(data)), pixels)


def test_other_modes_are_sent_as_rgb_or_rgba():
    palette = Image.new("P", (8, 4))
    palette.putpalette([255, 0, 0] * 256)
    assert decoded(encode_png(palette)).getpixel((1, 1)) == (255, 0, 0)
    transparent = Image.new("P", (8, 4))
    transparent.info["transparency"] = 0
    assert decoded(encode_png(transparent)).mode == "RGBA"


GREYS = {"I;16": "<u2", "I;16B": ">u2", "I": "<i4", "F": "<f4"}  # 16- and 32-bit greys, as Pillow lays them out


@st.composite
def source_images(draw) -> Image.Image:
    """Any mode a source file can decode to, 16-bit and palette included, with random pixels."""
    mode = draw(st.sampled_from(["1", "L", "LA", "La", "P", "PA", "RGB", "RGBA", "RGBa", "RGBX", "CMYK", "YCbCr",
                                 "LAB", "HSV", *GREYS]))
    size = (draw(st.integers(1, 24)), draw(st.integers(1, 24)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if mode in GREYS:  # 8-bit colours as 16-bit files store them (v*257), or as 0..255 in 32 bits
        eight = rng.integers(0, 256, size[::-1])
        return Image.frombytes(mode, size, (eight * 257 if mode.startswith("I;16") else eight)
                               .astype(GREYS[mode]).tobytes())
    im = Image.frombytes(mode, size, rng.bytes(len(Image.new(mode, size).tobytes())))
    if mode == "P":
        im.putpalette(rng.bytes(768))
        if draw(st.booleans()):
            im.info["transparency"] = int(rng.integers(0, 256))
    return im


@settings(max_examples=200, deadline=None)
@given(source_images())
def test_every_mode_the_server_returns_decodes_to_identical_pixels(im):
    """What a tool returns is to_rgb of its image (RGB or RGBA); those exact pixels come back from the PNG."""
    sent = to_rgb(im)
    back = decoded(encode_png(sent))
    assert back.mode == sent.mode in ("RGB", "RGBA") and back.size == im.size
    assert np.array_equal(np.asarray(back), np.asarray(sent))


def test_sixteen_bit_greys_keep_their_eight_bit_values():
    """A 16-bit PNG of 8-bit colours (v*257) is sent as exactly those 8-bit values."""
    eight = np.arange(256, dtype=np.uint16).reshape(16, 16)
    back = np.asarray(decoded(encode_png(to_rgb(Image.fromarray(eight * 257)))))
    assert back.shape == (16, 16, 3) and np.array_equal(back[..., 0], eight) and np.array_equal(back[..., 2], eight)


@settings(max_examples=60, deadline=None)
@given(width=st.integers(1, 900), height=st.integers(1, 900), side=st.integers(16, 400))
def test_preview_fits_the_long_side_and_keeps_the_shape(width, height, side):
    im = Image.new("RGB", (width, height), (10, 200, 30))
    shown = preview(im, side)
    if max(width, height) <= side:
        assert shown is im
        return
    assert max(shown.size) == side
    scale = side / max(width, height)
    assert abs(shown.width - width * scale) <= 1 and abs(shown.height - height * scale) <= 1
    assert shown.getpixel((shown.width // 2, shown.height // 2)) == (10, 200, 30)  # flat stays flat


def test_preview_looks_like_full_lanczos():
    """Box pre-reduction and a bilinear filter give about the picture Lanczos over the full image gives."""
    y, x = np.mgrid[:1500, :2000]
    pixels = np.stack([x * 255 // 1999, y * 255 // 1499, (x // 40 + y // 40) % 2 * 255], -1).astype(np.uint8)
    im = Image.fromarray(pixels)  # ramps plus a 40-px black/white checkerboard (hard edges)
    fast = np.asarray(preview(im, 784), dtype=np.int16)
    full = np.asarray(im.resize(fast.shape[1::-1], Image.Resampling.LANCZOS), dtype=np.int16)
    assert np.abs(fast - full).mean() < 2
    assert (np.abs(fast - full) > 64).mean() < 0.001  # only isolated edge pixels differ visibly
