"""JPEG-artefact normalisation works in bands of rows, one palette colour at a time: the same pixels as the whole
image at once (the former code is kept here as the oracle), in memory that grows with neither the palette nor
the image (a 12-megapixel photograph with a 64-colour palette held ~3 GB of working arrays)."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from trompe_agents.illusion import normalize
from trompe_agents.illusion.normalize import NormalizeStats, box_sum, normalize_image, palette


def whole_image(im: Image.Image, tolerance: int = 3, min_share: float = 0.0005, radius: int = 2
                ) -> tuple[Image.Image, NormalizeStats]:
    """normalize_image as it was: every palette colour's distance and vote planes stacked for the whole image."""
    rgb = np.asarray(im.convert("RGB"), dtype=np.int32)
    colours = palette(rgb, tolerance, min_share)
    out = rgb.copy()
    if len(colours):
        distances = np.stack([np.abs(rgb - c).max(axis=2) for c in colours])  # (k, h, w)
        nearest = distances.argmin(axis=0)
        joined = distances.min(axis=0) <= tolerance
        votes = np.stack([box_sum(joined & (nearest == i), radius) for i in range(len(colours))])
        majority = votes.argmax(axis=0)
        near = np.take_along_axis(distances, majority[None], axis=0)[0] <= 2 * tolerance
        snap = near & (votes.max(axis=0) > 0)
        out[snap] = colours[majority[snap]]
    changed = float((out != rgb).any(axis=2).mean())
    stats = NormalizeStats(["#{:02x}{:02x}{:02x}".format(*c) for c in colours], round(changed, 4), tolerance)
    return Image.fromarray(out.astype(np.uint8), "RGB"), stats


def blocks(seed: int, height: int, width: int, colours: int, block: int = 4) -> Image.Image:
    """Flat blocks of a few nearby colours (some within the tolerance of each other) with compression-like noise."""
    rng = np.random.default_rng(seed)
    shades = np.clip(rng.integers(8, 248, 3) + rng.integers(-8, 9, (colours, 3)), 0, 255).astype(np.int16)
    layout = rng.integers(0, colours, (height // block + 1, width // block + 1)).repeat(block, 0).repeat(block, 1)
    noise = rng.integers(-4, 5, (height, width, 3), dtype=np.int16) * rng.integers(0, 2, (height, width, 1),
                                                                                    dtype=np.int16)
    return Image.fromarray(np.clip(shades[layout[:height, :width]] + noise, 0, 255).astype(np.uint8), "RGB")


@contextmanager
def band_pixels(pixels: int) -> Iterator[None]:
    """Bands of `pixels` pixels instead of the default, so that a small image spans many bands."""
    saved, normalize.BAND_PIXELS = normalize.BAND_PIXELS, pixels
    try:
        yield
    finally:
        normalize.BAND_PIXELS = saved


@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 30), st.integers(1, 6),
       st.sampled_from([1, 2, 3, 7, 1_000]), st.sampled_from([(3, 1), (3, 2), (2, 3), (6, 2)]))
def test_bands_give_the_pixels_and_stats_of_the_whole_image_at_once(seed, height, width, colours, rows, shape):
    tolerance, radius = shape
    im = blocks(seed, height, width, colours)
    expected, expected_stats = whole_image(im, tolerance, 0.0005, radius)
    with band_pixels(rows * width):
        fixed, stats = normalize_image(im, tolerance, 0.0005, radius)
    assert np.array_equal(np.asarray(fixed), np.asarray(expected)) and stats == expected_stats


@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(1, 30), st.integers(0, 9), st.floats(0, 1))
def test_box_sums_count_the_true_pixels_of_each_window_within_the_image(seed, height, width, radius, share):
    """Against a plain count of every window, radii past 7 included (a 15x15 window no longer fits a byte)."""
    mask = np.random.default_rng(seed).random((height, width)) < share
    expected = [[int(mask[max(0, y - radius):y + radius + 1, max(0, x - radius):x + radius + 1].sum())
                 for x in range(width)] for y in range(height)]
    assert box_sum(mask, radius).tolist() == expected


def test_a_12_megapixel_photograph_with_a_large_palette_stays_within_a_few_hundred_megabytes():
    im = blocks(7, 3_000, 4_000, 48, block=250)  # 12 MP; 48 near colours, of which the palette keeps ~22
    tracemalloc.start()
    try:
        started = time.perf_counter()
        fixed, stats = normalize_image(im)
        took = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(stats.palette) > 16 and 0 < stats.changed_fraction < 1 and fixed.size == im.size
    # the former code held a distance and a vote plane per palette colour: ~490 MiB a megapixel here, ~6 GiB
    assert peak < 400 * 2**20, f"peak {peak / 2**20:.0f} MiB in {took:.1f} s"
