"""The memory registry keeps each image as one shared Pillow object: stored without serialising, read without a
copy by tools that only read (crop, measure), copied for tools that draw, and never changed by any tool.

Copies were most of a large image's call: a 48 MP crop spent 129 of 168 ms rebuilding the stored image from its
bytes, and storing a 48 MP result 194 ms serialising it (issue 29, bench/README.md "Whole-image copies").
"""

from __future__ import annotations

import pytest
from mcp import Client
from PIL import Image, ImageDraw

from imagekit import data_url, noise
from trompe_server import ToolContext
from trompe_server.limits import Limits

W, H = 96, 64
READERS = {  # every built-in tool that only reads its image, with arguments for a W x H image
    "crop": {"image": "original", "box": [10, 8, 70, 50]},
    "get_image_size": {"image": "original"},
    "convert_grayscale": {"image": "original"},
    "overlay_images": {"base": "original", "overlay": "original", "box": [0, 0, 48, 32], "opacity": 0.5},
    "compare_crops": {"crops": [{"image": "original", "box": [0, 0, 20, 20]},
                                {"image": "original", "box": [40, 30, 60, 50]}]},
    "isolate_color": {"image": "original", "color": "#808080", "tolerance": 60, "output": "keep"},
    "extract_channel": {"image": "original", "channel": "H"},
    "blur": {"image": "original", "radius": 2},
}
DRAWERS = {  # and every one that draws on its copy
    "draw_line": {"image": "original", "start": [0, 0], "end": [W - 1, H - 1], "width": 3},
    "draw_rectangle": {"image": "original", "box": [10, 8, 70, 50], "fill": "#00ff0080"},
    "draw_circle": {"image": "original", "center": [40, 30], "radius": 20, "color": "#0000ff80"},
    "draw_text": {"image": "original", "position": [4, 4], "text": "Ag", "size": 16},
    "overlay_grid": {"image": "original", "rows": 2, "cols": 3},
    "sample_color": {"image": "original", "points": [[20, 20], [60, 40]], "radius": 3},
}


def test_a_stored_image_is_kept_as_it_is_and_read_back_without_a_copy(make_app):
    registry = make_app().registry
    original = noise((W, H))
    session, _ = registry.open_session("local", "original", original, "noise.png")
    drawn = original.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    record = registry.add_output(session, drawn, "flip", {}, ("original",))
    for image_id, stored in (("original", original), (record.id, drawn)):
        read = registry.load(session, image_id)
        assert read.im is stored.im and read.readonly  # the same pixel memory, marked for copy-on-write
    assert registry.bytes_in_memory == 2 * W * H * 4  # what Pillow holds: RGB at 4 bytes a pixel


def test_a_tool_that_draws_gets_a_copy_and_one_that_reads_gets_the_stored_image(make_app):
    registry = make_app().registry
    original = noise((W, H))
    session, _ = registry.open_session("local", "original", original, "noise.png")
    ctx = ToolContext(registry, session)
    copy = ctx.image("original")
    assert copy.im is not original.im and not copy.readonly and copy.tobytes() == original.tobytes()
    assert ctx.view("original").im is original.im and ctx.parents == ["original"]  # read once, one parent


def test_drawing_on_a_view_by_mistake_changes_the_tool_own_object_not_the_stored_image(make_app):
    """Pillow copies a read-only image before ImageDraw or paste change it: a plugin that draws on ctx.view()
    instead of ctx.image() gets its own pixels, and the next call still reads the original ones."""
    registry = make_app().registry
    original = noise((W, H))
    kept = original.tobytes()
    session, _ = registry.open_session("local", "original", original, "noise.png")
    view = ToolContext(registry, session).view("original")
    ImageDraw.Draw(view).rectangle((0, 0, W, H), fill="black")
    view.paste((255, 0, 0), (0, 0, 8, 8))
    assert view.getpixel((20, 20)) == (0, 0, 0) and view.getpixel((1, 1)) == (255, 0, 0)
    assert registry.load(session, "original").tobytes() == kept


def test_an_image_read_back_from_disk_is_not_copied_again_for_a_draw(make_app):
    """It was made for this call alone, so ToolContext.image() hands it over as it is (one copy, not two: the
    49 MP overlay_grid of bench/memory_formats.py peaked 160 MB higher when it was copied again)."""
    registry = make_app(Limits(memory_budget=1)).registry
    session, _ = registry.open_session("local", "original", noise((W, H)), "noise.png")
    read = ToolContext(registry, session).image("original")
    assert not read.readonly and read.tobytes() == noise((W, H)).tobytes()


def test_a_spilled_image_comes_back_exact_and_to_a_draw_as_a_copy(make_app):
    registry = make_app(Limits(memory_budget=1)).registry  # everything goes to disk
    original = noise((W, H), "RGBA", min_alpha=1)  # alpha from 1, so it stays RGBA through the server's to_rgb
    session, _ = registry.open_session("local", "original", original, "noise.png")
    assert registry.bytes_in_memory == 0
    ctx = ToolContext(registry, session)
    assert ctx.view("original").tobytes() == original.tobytes() == ctx.image("original").tobytes()


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
@pytest.mark.parametrize("budget", [1 << 30, W * H * 4], ids=["in RAM", "spilled"])  # a call spills the rest
async def test_no_tool_changes_the_pixels_it_read(make_app, mode, budget):
    """Each tool runs twice on the same stored image: the image, and so the second result, stay as they were."""
    source = noise((W, H), mode, min_alpha=1)
    app = make_app(Limits(memory_budget=budget), tags=["core", "analysis"])
    async with Client(app.mcp) as client:
        opened = await client.call_tool("open_session", {"source": data_url(source)})
        session = opened.structured_content["session"]
        for tool, arguments in (READERS | DRAWERS).items():
            results = []
            for _ in range(2):
                result = await client.call_tool(tool, {"session": session, **arguments})
                assert not result.is_error, (tool, result.content[0].text)
                if result.structured_content["created"]:
                    results.append(app.registry.load(session, result.structured_content["image"]).tobytes())
            assert app.registry.load(session, "original").tobytes() == source.tobytes(), tool
            assert len(set(results)) <= 1, f"{tool} gave two different results from the same image"
