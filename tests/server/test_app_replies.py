"""What the app answers where no tool runs: the whole line for a tool name nobody registered, and `image://` reads
(the room they are admitted with, what they give back, how a gone session reads), through the official client."""

from __future__ import annotations

import logging

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, ResourceTemplateReference

from imagekit import data_url, gradient
from trompe_agents.failures import ErrorKind
from trompe_agents.toolclient import ToolClient, ToolInfrastructureError
from trompe_server import ImageId, ToolContext, ToolOutput, hookimpl
from trompe_server.admission import PIXEL_BYTES, WORK_FACTOR
from trompe_server.limits import Limits
from trompe_server.wire import FAILURE_META, REQUEST_META

READ = WORK_FACTOR * PIXEL_BYTES * 64 * 48  # what a full-size read of the 64x48 test image holds


@pytest.mark.parametrize("name, hint", [
    ("nope", ""),
    ("crop\u200b", " (it has characters outside printable ASCII, which no tool name has; did you mean 'crop'?)"),
    ("cropé", " (it has characters outside printable ASCII, which no tool name has; did you mean 'crop'?)"),
    ("nope\u200b", " (it has characters outside printable ASCII, which no tool name has)"),
])
async def test_an_unknown_tool_is_named_visibly_with_every_tool_the_server_has(app, name, hint):
    async with Client(app.mcp) as client:
        known = sorted(t.name for t in (await client.list_tools()).tools)
        result = await client.call_tool(name, {})
    assert result.is_error
    assert result.content[0].text == f"unknown tool {ascii(name)}{hint}; this server has: {', '.join(known)}"


async def test_a_read_is_admitted_with_room_for_its_pixels_and_their_png(make_app):
    """With all but READ - 1 bytes of the budget held elsewhere the read waits; with READ free it goes ahead."""
    app = make_app(Limits(memory_budget=4 * READ))
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        uri = f"image://{session['session']}/original"
        app.registry.work.reserve(3 * READ + 1)  # another call holds this much
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(client.read_resource, uri)
                with anyio.fail_after(30):
                    while app.registry.work.waiting == 0:
                        await anyio.sleep(0.01)
                app.registry.work.release()
        finally:
            app.registry.work.release()
        app.registry.work.reserve(3 * READ)
        try:
            with anyio.fail_after(30):
                await client.read_resource(uri)
        finally:
            app.registry.work.release()
        with anyio.fail_after(30):
            for _ in range(8):  # each read gives back what it held: eight in a row fit a budget of four
                await client.read_resource(uri)
    assert app.registry.work.reserved == 0


async def test_reading_an_unknown_image_names_the_argument(app):
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        with pytest.raises(MCPError) as refused:
            await client.read_resource(f"image://{session['session']}/nope")
    assert "image: unknown image 'nope'" in str(refused.value), str(refused.value)


async def test_reading_a_closed_sessions_image_says_whose_doing_it_is(app):
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        await client.call_tool("close_session", {"session": session["session"]})
        uri = f"image://{session['session']}/original"
        with pytest.raises(MCPError) as refused:
            await client.read_resource(uri)
    assert refused.value.error.data == {"uri": uri, FAILURE_META: "session"}


def measured_crop(ctx: ToolContext, image: ImageId) -> ToolOutput:
    """A tool whose output comes with data (test plugin)."""
    return ToolOutput("top-left corner", ctx.image(image).crop((0, 0, 8, 8)), {"mean": 1.5})


def measure_only(ctx: ToolContext, image: ImageId) -> ToolOutput:
    """A tool that answers with data and no image (test plugin)."""
    ctx.image(image)
    return ToolOutput("measured", data={"mean": 2.5})


def count_open(ctx: ToolContext) -> ToolOutput:
    """A tool that reads no image and answers with data (test plugin)."""
    return ToolOutput("counted", data={"open": 1})


class Measuring:
    @hookimpl
    def register_tools(self, register):
        register(measured_crop, tags=("test",))
        register(measure_only, tags=("test",))
        register(count_open, tags=("test",))


async def test_a_tool_result_is_its_line_its_png_a_link_and_its_metadata(make_app):
    app = make_app(extra_plugins={"measuring": Measuring()})
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        made = await client.call_tool("measured_crop", {"session": session["session"], "image": "original"})
        measured = await client.call_tool("measure_only", {"session": session["session"], "image": "original"})
        counted = await client.call_tool("count_open", {"session": session["session"]})
    text, png, link = made.content
    assert (text.type, text.text) == ("text", "img_001 8x8: top-left corner")
    assert (png.type, png.mime_type) == ("image", "image/png")
    assert (link.type, str(link.uri), link.name, link.mime_type) == (
        "resource_link", f"image://{session['session']}/img_001", "img_001", "image/png")
    assert made.structured_content == {"image": "img_001", "created": True, "width": 8, "height": 8,
                                       "parents": ["original"], "data": {"mean": 1.5}, "preview": None}
    assert [c.text for c in measured.content] == ["measured"]
    assert measured.structured_content == {"image": "original", "created": False, "width": 64, "height": 48,
                                           "parents": ["original"], "data": {"mean": 2.5}, "preview": None}
    assert counted.structured_content == {"image": "", "created": False, "width": 0, "height": 0, "parents": [],
                                          "data": {"open": 1}, "preview": None}  # no image read, none named


async def test_a_tool_call_sent_twice_with_one_request_id_is_stored_once(app):
    """What a client's resend after a lost reply does: the same request id answers with the image it stored."""
    async with Client(app.mcp) as client:
        opened = await client.call_tool("open_session", {"source": data_url(gradient())},
                                        meta={REQUEST_META: "open-request-1"})
        again = await client.call_tool("open_session", {"source": data_url(gradient())},
                                       meta={REQUEST_META: "open-request-1"})
        session = opened.structured_content["session"]
        crop = {"session": session, "image": "original", "box": [0, 0, 8, 8]}
        made = [await client.call_tool("crop", crop, meta={REQUEST_META: "crop-request-1"}) for _ in range(2)]
        add = {"session": session, "source": data_url(gradient(16, 12)), "name": "second"}
        added = [await client.call_tool("add_image", add, meta={REQUEST_META: "add-request-1"}) for _ in range(2)]
        listed = await client.call_tool("list_images", {"session": session})
    assert again.structured_content["session"] == session
    assert [m.structured_content["image"] for m in made] == ["img_001", "img_001"]
    assert [(a.is_error, (a.structured_content or {}).get("image")) for a in added] == [(False, "second")] * 2, \
        added[1].content[0].text
    assert [i["id"] for i in listed.structured_content["images"]] == ["original", "img_001", "second"]


def broken_measure(ctx: ToolContext, image: ImageId) -> ToolOutput:
    """A tool with a bug (test plugin)."""
    ctx.image(image)
    raise LookupError("no such band")


class Broken:
    @hookimpl
    def register_tools(self, register):
        register(broken_measure, tags=("test",))


async def test_a_plugin_bug_is_one_whole_line_and_its_traceback_goes_to_the_log(make_app, caplog):
    app = make_app(extra_plugins={"broken": Broken()})
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        with caplog.at_level(logging.ERROR, logger="trompe_server.app"):
            result = await client.call_tool("broken_measure", {"session": session["session"], "image": "original"})
    assert result.is_error and FAILURE_META not in (result.meta or {})
    assert [c.text for c in result.content] == [
        "Error executing tool broken_measure: the tool failed unexpectedly (LookupError: no such band); nothing was "
        "stored, the session is unchanged"]
    logged = [r for r in caplog.records if r.name == "trompe_server.app"]
    assert [(r.levelno, r.getMessage(), r.exc_info[0]) for r in logged] == [
        (logging.ERROR, "tool failed unexpectedly", LookupError)]
    assert app.registry.work.reserved == 0  # the call's memory is given back


async def test_a_callers_mistake_carries_no_failure_meta_and_a_gone_session_says_whose_doing_it_is(app):
    """The agent retries on `trompe/failure` (toolclient.server_failure); a wrong argument must not look like that."""
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        crop = {"session": session["session"], "image": "nope", "box": [0, 0, 8, 8]}
        wrong = await client.call_tool("crop", crop)
        await client.call_tool("close_session", {"session": session["session"]})
        gone = await client.call_tool("crop", {**crop, "image": "original"})
    assert wrong.is_error and FAILURE_META not in (wrong.meta or {})
    assert [c.text for c in wrong.content] == [
        "Error executing tool crop: image: unknown image 'nope'; this session has: original"]
    assert gone.is_error and gone.meta[FAILURE_META] == "session"
    assert [c.text for c in gone.content] == [
        f"Error executing tool crop: session: unknown, closed or expired session '{session['session']}' (sessions "
        "idle for 3600 s are dropped); call open_session first"]


async def test_a_registry_that_is_down_is_the_servers_fault_wherever_a_client_meets_it(make_app, own_redis):
    """A tool call, an image read and a completion each say the registry failed, never the caller's input; the
    agent's tool client fails the sample as infrastructure. (A completion used to answer "no images", as if the
    session were empty, while Redis was down.)"""
    app = make_app(registry=own_redis.url)
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": data_url(gradient())})).structured_content
        own_redis.stop()
        crop = await client.call_tool("crop", {"session": session["session"], "image": "original", "box": [0, 0, 8, 8]})
        uri = f"image://{session['session']}/original"
        with pytest.raises(MCPError) as read:
            await client.read_resource(uri)
        with pytest.raises(MCPError) as completion:
            await client.complete(ResourceTemplateReference(type="ref/resource", uri="image://{session}/{image}"),
                                  {"name": "image", "value": ""}, context_arguments={"session": session["session"]})
    unreachable = "registry: the shared registry (Redis at redis://127.0.0.1:"
    assert crop.is_error and crop.meta[FAILURE_META] == "registry" and unreachable in crop.content[0].text
    assert read.value.error.data == {"uri": uri, FAILURE_META: "registry"} and unreachable in str(read.value)
    assert completion.value.error.data == {FAILURE_META: "registry"} and unreachable in str(completion.value)
    assert read.value.error.code == completion.value.error.code == INTERNAL_ERROR  # not the caller's parameters
    tools = ToolClient(app.mcp)
    tools.retry_delay = 0.01
    async with tools:
        with pytest.raises(ToolInfrastructureError, match=r"crop: the tool server .* failed 5 times") as failed:
            await tools.call(session["session"], "crop", {"image": "original", "box": [0, 0, 8, 8]})
    assert failed.value.kind == ErrorKind.TOOL_INFRASTRUCTURE


async def test_an_image_opened_from_a_file_keeps_its_path_in_the_lineage(make_app, tmp_path):
    """Only inline data is shortened to a label; a file's path is what list_images shows as its source."""
    gradient().save(tmp_path / "scene.png")
    app = make_app()
    async with Client(app.mcp) as client:
        session = (await client.call_tool("open_session", {"source": "scene.png"})).structured_content["session"]
        await client.call_tool("add_image", {"session": session, "source": data_url(gradient()), "name": "inline"})
        listed = await client.call_tool("list_images", {"session": session})
    assert [i["arguments"]["source"] for i in listed.structured_content["images"]] == [
        "scene.png", f"<inline image, {len(data_url(gradient()))} characters>"]
