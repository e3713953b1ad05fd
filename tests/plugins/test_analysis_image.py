"""overlay_grid, extract_channel, blur: pixels checked against numpy, refusals leave the session alone."""

from __future__ import annotations

import colorsys
import math
from fractions import Fraction

import numpy as np
from PIL import Image
from toolcheck import call, gradient, pixels, refused

SOURCE = np.asarray(gradient())  # 64x48
RNG = np.random.default_rng(7)
NOISE = RNG.integers(0, 256, (12, 16, 3), dtype=np.uint8)


async def test_grid_lines_and_cells(client, open_image):
    session = await open_image()
    out, meta = await pixels(client, session, "overlay_grid", image="original", rows=3, cols=4, color="#00ff00")
    cells = meta["data"]["cells"]
    assert len(cells) == 12 and cells["A1"] == [0, 0, 16, 16] and cells["D3"] == [48, 32, 64, 48]
    for x in (16, 32, 48):
        assert (out[:, x] == (0, 255, 0)).all()
    for y in (16, 32):
        assert (out[y, :] == (0, 255, 0)).all()
    for x0, y0, x1, y1 in cells.values():  # away from lines and the corner label, nothing changed
        inner = (slice(y0 + 12, y1 - 1), slice(x0 + 12, x1 - 1))
        assert (out[inner] == SOURCE[inner]).all()
    for x0, y0, _, _ in cells.values():  # each cell carries its label in its top-left corner
        corner = (slice(y0 + 1, y0 + 12), slice(x0 + 1, x0 + 12))
        assert (out[corner] != SOURCE[corner]).any(axis=-1).sum() > 15


async def test_grid_refusals(client, open_image):
    session = await open_image()
    await refused(client, session, "overlay_grid", "rows", "accepted: 1 to 50", image="original", rows=0)
    await refused(client, session, "overlay_grid", "cols", "accepted: 1 to 26", image="original", cols=27)
    await refused(client, session, "overlay_grid", "rows", "accepted: 1 to 12 for this image", image="original",
                  rows=20)
    await refused(client, session, "overlay_grid", "color", "not a colour", image="original", color="nope")


async def test_rgb_value_and_luma_channels_equal_numpy(client, open_image):
    session = await open_image(Image.fromarray(NOISE))
    wide = NOISE.astype(int)  # BT.601 luma rounded half up, in exact integers
    expected = {"R": NOISE[..., 0], "G": NOISE[..., 1], "B": NOISE[..., 2], "V": NOISE.max(axis=-1),
                "L": (299 * wide[..., 0] + 587 * wide[..., 1] + 114 * wide[..., 2] + 500) // 1000}
    for channel, values in expected.items():
        out, meta = await pixels(client, session, "extract_channel", image="original", channel=channel)
        assert (out[..., 0] == values).all() and (out[..., 1] == out[..., 2]).all(), channel
        assert (meta["data"]["min"], meta["data"]["max"]) == (values.min(), values.max())


def exact_hue_or_saturation(px, channel: str) -> int:
    """colorsys's hue or saturation times 255 in exact fractions, rounded half up."""
    r, g, b = map(int, px)
    high, spread = max(r, g, b), max(r, g, b) - min(r, g, b)
    if channel == "S":
        value = Fraction(255 * spread, high) if high else Fraction(0)
    elif spread == 0:
        value = Fraction(0)
    else:
        sector = Fraction(g - b, spread) if high == r else 2 + Fraction(b - r, spread) if high == g \
            else 4 + Fraction(r - g, spread)
        value = (sector / 6) % 1 * 255
    return math.floor(value + Fraction(1, 2))


# colours whose hue is exactly k + 1/2, which float64 put a hair below: 17.5, 195.5, 59.5
HALVES = np.array([[[62, 42, 28], [148, 67, 202], [164, 232, 62]]], dtype=np.uint8)


async def test_hue_and_saturation_are_colorsys_rounded_half_up_exactly(client, open_image):
    for grid in (NOISE, HALVES):
        session = await open_image(Image.fromarray(grid))
        hsv = np.array([[colorsys.rgb_to_hsv(*(px / 255)) for px in row] for row in grid])
        for index, channel in enumerate("HS"):
            out, _ = await pixels(client, session, "extract_channel", image="original", channel=channel)
            exact = np.array([[exact_hue_or_saturation(px, channel) for px in row] for row in grid])
            assert (out[..., 0] == exact).all(), (channel, np.argwhere(out[..., 0] != exact).tolist())
            assert np.abs(out[..., 0].astype(int) - np.floor(hsv[..., index] * 255 + 0.5)).max() <= 1, channel


async def test_pure_hues_land_on_thirds(client, open_image):
    primaries = Image.fromarray(np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [128, 128, 128]]], np.uint8))
    session = await open_image(primaries)
    hue, _ = await pixels(client, session, "extract_channel", image="original", channel="H")
    saturation, _ = await pixels(client, session, "extract_channel", image="original", channel="S")
    assert hue[0, :, 0].tolist() == [0, 85, 170, 0] and saturation[0, :, 0].tolist() == [255, 255, 255, 0]


async def test_channel_refusals(client, open_image):
    session = await open_image()
    await refused(client, session, "extract_channel", "channel", "'R', 'G', 'B', 'H', 'S', 'V' or 'L'",
                  image="original", channel="X")
    await refused(client, session, "extract_channel", "image", "unknown image 'gone'", image="gone",
                  channel="R")


def checkerboard(size: int = 32) -> Image.Image:
    yy, xx = np.mgrid[:size, :size]
    values = np.where((xx + yy) % 2 == 0, 255, 0).astype(np.uint8)
    return Image.fromarray(np.stack([values] * 3, axis=-1))


async def test_blur_smooths_a_checkerboard_and_keeps_its_mean(client, open_image):
    session = await open_image(checkerboard())
    out, _ = await pixels(client, session, "blur", image="original", radius=3)
    assert np.asarray(checkerboard()).std() > 127 and out.std() < 3
    assert abs(out.mean() - 127.5) < 1.5


async def test_blur_keeps_flat_colour_and_allows_large_radii(client, open_image):
    session = await open_image(Image.new("RGB", (40, 30), (91, 17, 230)))
    out, _ = await pixels(client, session, "blur", image="original", radius=200)
    assert (out == (91, 17, 230)).all()


async def test_blur_does_not_bleed_colour_from_transparent_pixels(client, open_image):
    rgba = np.zeros((20, 20, 4), np.uint8)
    rgba[:, :10] = (255, 0, 0, 255)
    rgba[:, 10:] = (0, 255, 0, 0)  # invisible green
    session = await open_image(Image.fromarray(rgba, "RGBA"))
    out, _ = await pixels(client, session, "blur", image="original", radius=2)
    visible = out[..., 3] > 30
    assert visible[:, 10:].any() and (out[visible][:, 1] <= 10).all()


async def test_blur_refusals(client, open_image):
    session = await open_image()
    await refused(client, session, "blur", "radius", "accepted: 0.5 to 200", image="original", radius=0.2)
    await refused(client, session, "blur", "radius", "accepted: 0.5 to 200", image="original", radius=250)
    await call(client, session, "blur", image="original", radius=0.5)
