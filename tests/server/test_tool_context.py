"""What a plugin's ToolContext does for a call: the images it reads count once each toward max_inputs and the
memory budget, and become the parents of the result."""

from __future__ import annotations

import re

import pytest
from mcp import Client

from imagekit import data_url, gradient
from serverkit import ToolkitPlugin
from trompe_server import ToolContext, ToolOutput, hookimpl
from trompe_kernel.errors import PluginError
from trompe_server.limits import Limits

HELD = 64 * 48 * 4  # bytes Pillow holds of the 64x48 RGB test image: 4 a pixel


async def open_three(client: Client) -> str:
    """A session holding three 64x48 images: original, b and c."""
    session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content["session"]
    for name in ("b", "c"):
        added = await client.call_tool("add_image", {"session": session, "source": data_url(gradient()), "name": name})
        assert not added.is_error, added.content[0].text
    return session


async def test_an_image_read_twice_counts_once_toward_max_inputs(make_app):
    app = make_app(Limits(max_inputs=2), extra_plugins={"testkit": ToolkitPlugin()})
    async with Client(app.mcp) as client:
        session = await open_three(client)
        ok = await client.call_tool("stack_images", {"session": session, "images": ["original", "b", "original"]})
        assert not ok.is_error, ok.content[0].text
        assert ok.structured_content["parents"] == ["original", "b"] and ok.structured_content["height"] == 3 * 48
        before = await client.call_tool("list_images", {"session": session})
        refused = await client.call_tool("stack_images", {"session": session, "images": ["original", "b", "c"]})
        assert refused.is_error
        assert refused.content[0].text == ("Error executing tool stack_images: images: one tool call may combine at "
                                           "most 2 images (max_inputs)")
        after = await client.call_tool("list_images", {"session": session})
        assert after.structured_content == before.structured_content


def held(ctx: ToolContext, images: list[str]) -> ToolOutput:
    """Read each image in turn and report the bytes of the work budget the call holds after each (test plugin)."""
    after = []
    for image in images:
        ctx.image(image, "images")
        after.append(ctx.registry.work.reserved)
    return ToolOutput(" ".join(map(str, after)))


class HeldPlugin:
    """Registers `held`, and the same function as `held_more`, declared to hold `copies` working copies."""

    def __init__(self, copies: float = 3):
        self.copies = copies

    @hookimpl
    def register_tools(self, register):
        register(held, tags=("test",))
        register(held, tags=("test",), name="held_more", copies=self.copies)


async def test_a_call_holds_two_copies_of_each_image_it_reads_and_releases_them(make_app):
    """A call holds about two copies of what it reads (the pixels and the result being made) against the memory
    budget, so other work waits and kept pixels leave RAM first; an image read again holds no more."""
    app = make_app(extra_plugins={"held": HeldPlugin()})
    async with Client(app.mcp) as client:
        session = await open_three(client)
        result = await client.call_tool("held", {"session": session, "images": ["original", "original", "b"]})
        assert result.content[0].text == f"{2 * HELD} {2 * HELD} {4 * HELD}"
    assert app.registry.work.reserved == 0


async def test_a_tool_that_declares_more_working_copies_reserves_them(make_app):
    app = make_app(extra_plugins={"held": HeldPlugin(copies=3.5)})
    async with Client(app.mcp) as client:
        session = await open_three(client)
        result = await client.call_tool("held_more", {"session": session, "images": ["original", "b"]})
        assert result.content[0].text == f"{round(3.5 * HELD)} {2 * round(3.5 * HELD)}"
    assert app.registry.work.reserved == 0


@pytest.mark.parametrize("copies", [0, 0.5, 65, float("nan"), "2"])
def test_a_working_copy_count_outside_1_to_64_is_refused_at_start_up(make_app, copies):
    with pytest.raises(PluginError, match=re.escape(f"plugin 'held' registers tool 'held_more' with copies={copies!r}; "
                                                    "accepted: a number from 1 to 64")):
        make_app(extra_plugins={"held": HeldPlugin(copies=copies)})
