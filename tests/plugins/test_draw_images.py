"""get_image_size, convert_grayscale, overlay_images, and what the core plugin exposes."""

from __future__ import annotations

import numpy as np
from mcp import Client
from PIL import Image
from toolcheck import call, data_url, gradient, listing, pixels, refused

SOURCE = np.asarray(gradient())  # 64x48, every pixel different
CORE = {"draw_line", "draw_rectangle", "draw_circle", "draw_text", "crop", "compare_crops", "get_image_size",
        "convert_grayscale", "overlay_images"}
ANALYSIS = {"overlay_grid", "extract_channel", "sample_color", "isolate_color", "blur"}


def bt601(rgb: np.ndarray) -> np.ndarray:
    """0.299 R + 0.587 G + 0.114 B rounded half up, in exact integers."""
    rgb = np.asarray(rgb).astype(np.int64)
    return ((299 * rgb[..., 0] + 587 * rgb[..., 1] + 114 * rgb[..., 2] + 500) // 1000).astype(np.uint8)


async def test_get_image_size_reports_without_storing(client, open_image):
    session = await open_image(gradient(37, 21))
    before = await listing(client, session)
    result = await call(client, session, "get_image_size", image="original")
    assert "37x21" in result.content[0].text
    assert result.structured_content["data"] == {"width": 37, "height": 21, "mode": "RGB"}
    assert not result.structured_content["created"] and await listing(client, session) == before
    await refused(client, session, "get_image_size", "image", "unknown image 'img_001'", image="img_001")


async def test_grayscale_is_bt601_luma(client, open_image):
    session = await open_image()
    out, meta = await pixels(client, session, "convert_grayscale", image="original")
    assert (out[..., 0] == bt601(SOURCE)).all()
    assert (out[..., 0] == out[..., 1]).all() and (out[..., 1] == out[..., 2]).all()
    assert meta["parents"] == ["original"]


async def test_grayscale_rounds_an_exact_half_up(client, open_image):
    """(0, 36, 12) has luma exactly 22.5: float64 arithmetic made it 22.499999999999996 and gave 22."""
    session = await open_image(Image.new("RGB", (4, 3), (0, 36, 12)))
    out, _ = await pixels(client, session, "convert_grayscale", image="original")
    assert (out == 23).all()


async def test_grayscale_keeps_transparency(client, open_image):
    rgba = np.zeros((8, 8, 4), np.uint8)
    rgba[..., :3] = (200, 100, 50)
    rgba[..., 3] = np.arange(8, dtype=np.uint8)[None, :] * 30
    session = await open_image(Image.fromarray(rgba, "RGBA"))
    out, _ = await pixels(client, session, "convert_grayscale", image="original")
    assert (out[..., 3] == rgba[..., 3]).all() and (out[..., 0] == bt601(np.array([200, 100, 50]))).all()


async def test_overlay_blends_at_the_given_opacity(client, open_image):
    session = await open_image()
    await call(client, session, "add_image", source=data_url(Image.new("RGB", (20, 10), (255, 255, 255))),
               name="patch")
    out, meta = await pixels(client, session, "overlay_images", base="original", overlay="patch",
                             box=[10, 5, 30, 15], opacity=0.25)
    expected = np.floor(SOURCE[5:15, 10:30] * 0.75 + 255 * 0.25 + 0.5)
    assert (out[5:15, 10:30] == expected).all()
    outside = np.ones((48, 64), bool)
    outside[5:15, 10:30] = False
    assert (out[outside] == SOURCE[outside]).all()
    assert meta["parents"] == ["original", "patch"]


async def test_overlay_is_resized_into_the_box(client, open_image):
    session = await open_image()
    await call(client, session, "crop", image="original", box=[0, 0, 8, 8])  # img_001
    out, _ = await pixels(client, session, "overlay_images", base="original", overlay="img_001",
                          box=[32, 16, 48, 32], opacity=1)
    assert (out[16:32, 32:48] == np.kron(SOURCE[:8, :8], np.ones((2, 2, 1), np.uint8))).all()


async def test_overlay_respects_the_overlays_transparency(client, open_image):
    session = await open_image()
    half = np.zeros((4, 4, 4), np.uint8)
    half[..., 2], half[..., 3] = 255, 0
    half[:2, :, 3] = 255  # top half opaque blue, bottom half transparent
    await call(client, session, "add_image", source=data_url(Image.fromarray(half, "RGBA")), name="mark")
    out, _ = await pixels(client, session, "overlay_images", base="original", overlay="mark", box=[0, 0, 4, 4],
                          opacity=1)
    assert (out[:2, :4] == (0, 0, 255)).all() and (out[2:4, :4] == SOURCE[2:4, :4]).all()


async def test_overlay_refusals(client, open_image):
    session = await open_image()
    args = {"base": "original", "overlay": "original", "box": [0, 0, 10, 10]}
    await refused(client, session, "overlay_images", "opacity", "accepted: 0 to 1", **args, opacity=1.5)
    await refused(client, session, "overlay_images", "overlay", "unknown image 'x'", **(args | {"overlay": "x"}))
    await refused(client, session, "overlay_images", "base", "unknown image 'y'", **(args | {"base": "y"}))
    await refused(client, session, "overlay_images", "box", "outside the 64x48 image",
                  **(args | {"box": [60, 40, 70, 50]}))


async def test_task_tags_select_the_tool_sets(make_app):
    """Task I exposes `core` only; Task II adds `analysis`."""
    for tags, expected in ((["core"], CORE), (["core", "analysis"], CORE | ANALYSIS)):
        async with Client(make_app(tags=tags).mcp) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        plugin_tools = {name for name, t in tools.items() if "session" not in t.meta["tags"]}
        assert plugin_tools == expected
        for name in expected:
            schema = tools[name].input_schema
            assert tools[name].description and schema["required"][0] == "session"
            for prop, spec in schema["properties"].items():
                assert spec.get("description"), (name, prop)  # the model sees what each argument means
