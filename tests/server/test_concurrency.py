"""Many sessions at once: blocking work runs off the event loop and no session sees another's images."""

from __future__ import annotations

import base64
import io

import anyio
from mcp import Client
from PIL import Image

from imagekit import data_url, result_image
COLOURS = [(i * 30, 255 - i * 30, (i * 77) % 256) for i in range(8)]


async def test_blocking_tool_work_runs_off_the_event_loop(test_app):
    """`meet` blocks its thread until a second call arrives: both finish only if they run concurrently."""
    async with Client(test_app().mcp) as client:
        opened = await client.call_tool("open_session", {"source": data_url(Image.new("RGB", (4, 4)))})
        session = opened.structured_content["session"]
        results = []

        async def meet():
            results.append(await client.call_tool("meet", {"session": session, "image": "original"}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(meet)
            tg.start_soon(meet)
        assert [r.is_error for r in results] == [False, False]
        assert results[0].content[0].text == "met on original"


async def test_parallel_sessions_are_isolated(test_app):
    app = test_app()
    seen: dict[int, dict[str, set]] = {}

    async def worker(i: int, client: Client):
        colour = COLOURS[i]
        opened = await client.call_tool("open_session", {"source": data_url(Image.new("RGB", (40, 30), colour))})
        session = opened.structured_content["session"]
        for step in range(4):
            crop = await client.call_tool("crop", {"session": session, "image": "original",
                                                   "box": [step, step, 40, 30]})
            assert crop.structured_content["image"] == f"img_{2 * step + 1:03d}"
            line = await client.call_tool("paint_line", {"session": session, "image": crop.structured_content["image"],
                                                         "start": [0, 0], "end": [5, 5], "color": "#010203"})
            assert line.structured_content["image"] == f"img_{2 * step + 2:03d}"
            await anyio.sleep(0)
        listing = (await client.call_tool("list_images", {"session": session})).structured_content["images"]
        colours = {}
        for record in listing:
            blob = (await client.read_resource(f"image://{session}/{record['id']}")).contents[0].blob
            colours[record["id"]] = {c for _, c in Image.open(io.BytesIO(base64.b64decode(blob))).getcolors()}
        view = await client.call_tool("view_image", {"session": session, "image": "img_008"})
        colours["view"] = {c for _, c in result_image(view).getcolors()}
        seen[i] = colours

    async with Client(app.mcp) as client:
        async with anyio.create_task_group() as tg:
            for i in range(len(COLOURS)):
                tg.start_soon(worker, i, client)
    for i, colours in seen.items():
        assert len(colours) == 10
        for image_id, found in colours.items():
            assert found <= {COLOURS[i], (1, 2, 3)}, (i, image_id, found)
    assert len(app.registry.session_ids()) == len(COLOURS)


async def test_a_plugin_bug_is_a_tool_error_and_the_server_carries_on(test_app):
    async with Client(test_app().mcp) as client:
        opened = await client.call_tool("open_session", {"source": data_url(Image.new("RGB", (4, 4)))})
        session = opened.structured_content["session"]
        result = await client.call_tool("buggy_tool", {"session": session, "image": "original"})
        assert result.is_error
        assert "failed unexpectedly (ZeroDivisionError: integer division or modulo by zero); nothing was stored" \
            in result.content[0].text
        listing = await client.call_tool("list_images", {"session": session})
        assert [i["id"] for i in listing.structured_content["images"]] == ["original"]
        after = await client.call_tool("invert_colors", {"session": session, "image": "original"})
        assert after.structured_content["image"] == "img_001"
