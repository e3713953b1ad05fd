"""The in-process tool path answers exactly what MCP answers: the same sample through `ToolClient.in_process()`
(the server's handlers called directly, PNGs as bytes) and through `ToolClient.in_process(mcp=True)` (the official
SDK's in-memory transport: JSON-RPC models, base64) gives the same record, trace and image bytes, and every
failure the same message.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from imagekit import gradient, noise, png_bytes
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import ImageContent

from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.datasets.base import Sample
from trompe_agents.illusion.agent import AgentConfig, IllusionAgent
from trompe_agents.illusion.answering import answer_one
from trompe_agents.toolclient import ToolClient, ToolClientError
from trompe_kernel import hookimpl
from trompe_server.app import ServerConfig, create_app
from trompe_server.inprocess import InProcessServer
from trompe_server.limits import Limits
from trompe_server.pngblock import PngBlock, image_block
from trompe_server.toolapi import ImageId, ToolContext, ToolOutput
from trompe_server.wire import REQUEST_META

PATHS = {"direct": False, "mcp": True}  # ToolClient.in_process(mcp=...)
LIMITS = Limits(max_images=6)  # small enough that the script runs past it
NAN = float("nan")

# One reply per round: every kind of tool result, every kind of refusal, then the answer.
SCRIPT: list[Any] = [
    tool_call("crop", image="original", box=[8, 6, 40, 30], zoom=2),  # img_001
    [tool_call("draw_line", image="img_001", start=[0, 0], end=[63, 47], color="#00ff00"),  # img_002, two at once
     tool_call("get_image_size", image="original")],  # data, no image
    tool_call("sample_color", image="original", points=[[4, 4], [60.5, 40]], radius=2),  # img_003, nested data
    tool_call("view_image", image="img_002"),  # an old image again, nothing new
    tool_call("list_images"),  # lineage
    tool_call("crop", image="original", box=[1, 2, 3]),  # pydantic: too short
    tool_call("crop", image="original", box=[0, 0, 500, 10]),  # outside the image
    tool_call("crop", image="original", box=[0, 0, NAN, 10]),  # NaN: null on the wire
    tool_call("crop", image="img_999", box=[0, 0, 4, 4]),  # no such image
    tool_call("draw_circle", image="original", center=[10, 10], radius=4, color="no-such-colour"),
    tool_call("convert_grayscale", image="img_003"),  # img_004
    tool_call("blur", image="img_004", radius=1.5),  # img_005: the session's 6th image, its last
    tool_call("crop", image="original", box=[0, 0, 8, 8]),  # over max_images
    tool_call("no_such_tool", image="original"),  # never offered
    {"reasons": "the scripted path is done", "answer": "yes"},
]


def scripted(seen: list[Any]) -> FunctionBackend:
    """Plays SCRIPT one reply a round, keeping what it was shown each time (texts, errors and image bytes)."""

    def reply(messages, tools):
        seen.append([(m.role, m.text, m.tool_name, m.is_error, [(i.id, i.mime_type, i.data) for i in m.images])
                     for m in messages])
        return SCRIPT[sum(m.role == "assistant" for m in messages)]

    return FunctionBackend(reply)


async def run_sample(path: str, tmp_path: Path) -> dict[str, Any]:
    """The script as one illusion-run sample, through answer_one as a run answers it; what a user could compare."""
    picture = tmp_path / "inputs" / "q.png"
    picture.parent.mkdir(exist_ok=True)
    noise((64, 48)).save(picture)
    out = tmp_path / path
    out.mkdir()
    seen: list[Any] = []
    async with ToolClient.in_process(ServerConfig(limits=LIMITS), mcp=PATHS[path]) as tools:
        agent = IllusionAgent(scripted(seen), tools,
                              AgentConfig(task=1, router="regex", max_rounds=len(SCRIPT), tags=["core", "analysis"]))
        sample = Sample("s1", [picture], "Is the line straight?", answer="yes")
        record = (await answer_one(agent, sample, 0, out, 1, {})).to_json()
    for moving in ("seconds", "finished"):
        record.pop(moving)
    trace = [json.loads(line) for line in next(out.rglob("trace.jsonl")).read_text().splitlines()]
    session = next(e["session"] for e in trace if e["event"] == "start")
    events = [json.loads(json.dumps({k: v for k, v in e.items() if k not in ("t", "seconds")}).replace(session, "S"))
              for e in trace]
    files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
             and p.name != "trace.jsonl"}
    return {"record": record, "events": events, "files": files, "seen": seen}


async def test_a_scripted_sample_is_the_same_through_the_in_process_path_and_through_mcp(tmp_path):
    direct, mcp = await run_sample("direct", tmp_path), await run_sample("mcp", tmp_path)
    assert direct["record"] == mcp["record"]
    assert direct["events"] == mcp["events"]
    assert direct["files"] == mcp["files"]  # every image the model saw, byte for byte
    assert direct["seen"] == mcp["seen"]
    # and the script did reach every case it names
    record = direct["record"]
    assert record["answer"] == "yes" and record["correct"] is True
    assert record["tool_calls"] == ["crop", "draw_line", "get_image_size", "sample_color", "view_image",
                                    "list_images", "convert_grayscale", "blur"]
    assert record["refused_calls"] == ["crop", "crop", "crop", "crop", "draw_circle", "crop"]
    assert record["unknown_calls"] == ["no_such_tool"]
    results = [e for e in direct["events"] if e["event"] == "tool_result"]
    errors = [e["text"] for e in results if e["is_error"]]
    assert len(errors) == 7 and "max_images" in errors[-2] and "no_such_tool" in errors[-1]
    assert len([f for f in direct["files"] if f.endswith(".png") and "/images/" in f]) == 6  # original + 5 made


def measure(ctx: ToolContext, image: ImageId) -> ToolOutput:
    """Measurements as a plugin may return them: a tuple, a NaN, a None (JSON makes a list and two nulls)."""
    width, height = ctx.size(image)
    return ToolOutput("measured", data={"size": (width, height), "ratio": float("nan"), "unit": None})


class Measuring:
    @hookimpl
    def register_tools(self, register):
        register(measure, tags=("core",))


async def outcome(call) -> tuple[Any, ...]:
    """What a caller sees of one request: its value, or the error's type and text."""
    try:
        return ("ok", await call())
    except MCPError as exc:
        return ("MCPError", exc.code, exc.error.message, exc.error.data)
    except ToolClientError as exc:
        return (type(exc).__name__, str(exc))


async def failures(path: str) -> list[tuple[Any, ...]]:
    """Each kind of refusal a client can meet, in one fresh server; session ids replaced by S."""
    config = ServerConfig(limits=Limits(max_images=2, max_pixels=1000), extra_plugins={"measuring": Measuring()})
    async with ToolClient.in_process(config, mcp=PATHS[path]) as tools:
        info = await tools.open_session({"original": _png()})

        def call(name, **arguments):
            async def run():
                result = await tools.call(info.id, name, arguments)
                return result.text, result.is_error, result.structured

            return run

        seen = [
            await outcome(call("crop", image="original", box=[0, 0, "wide", 4])),  # bad arguments
            await outcome(call("crop", image="original", box=[0, 0, 4, 4], zoom=0)),
            await outcome(call("crop", image="original", box=[0, 0, 32, 24], zoom=2)),  # over max_pixels
            await outcome(call("crop", image="original", box=[0, 0, 4, 4], colour="red")),  # ignored: img_001
            await outcome(call("crop", image="missing", box=[0, 0, 4, 4])),  # unknown image
            await outcome(call("crop", image="original", box=[0, 0, 4, 4])),  # over max_images
            await outcome(call("no_such_tool", image="original")),  # a name the server does not have
            await outcome(call("crop\u200b", image="original")),  # ... with an invisible character
            await outcome(lambda: tools.image_png(info.id, "img_404")),  # unknown image, read as a resource
            await outcome(lambda: tools.image_png("no-such-session", "original")),
            await outcome(lambda: tools.open_session({"original": b"not an image"})),  # bad source
            await outcome(call("measure", image="original")),  # structured content as JSON values
        ]
        await tools.close_session(info.id)
        seen.append(await outcome(call("crop", image="original", box=[0, 0, 4, 4])))  # a closed session
    return json.loads(json.dumps(seen, default=str).replace(info.id, "S"))


def _png() -> bytes:
    return png_bytes(gradient(32, 24))


async def test_every_refusal_has_the_same_message_through_both_paths():
    direct, mcp = await failures("direct"), await failures("mcp")
    assert direct == mcp
    kinds = [entry[0] for entry in direct]
    assert kinds == ["ok"] * 8 + ["MCPError", "ToolInfrastructureError", "ToolClientError", "ok",
                                  "ToolInfrastructureError"]
    assert [entry[1][1] for entry in direct[:8]] == [True, True, True, False, True, True, True, True]  # is_error
    assert "max_pixels" in direct[2][1][0] and "max_images" in direct[5][1][0]
    assert "unknown tool 'no_such_tool'" in direct[6][1][0]
    assert direct[-2][1][2]["data"] == {"size": [32, 24], "ratio": None, "unit": None}


async def test_the_tool_list_is_the_same_and_a_callers_edits_never_reach_the_server():
    async with ToolClient.in_process() as direct, ToolClient.in_process(mcp=True) as mcp:
        offered, listed = await direct.list_tools(), await mcp.list_tools()
        assert offered == listed
        for tool in offered:  # a backend reshaping the schemas in place
            for schema in tool.parameters["properties"].values():
                schema.clear()
        direct._tools = None  # noqa: SLF001 -- ask the server again
        assert await direct.list_tools() == listed


async def test_a_resent_request_id_answers_what_the_first_call_stored():
    """The in-process path carries `_meta` as MCP does: after a registry outage the client resends a call with its
    request id, and the server answers what it stored instead of storing a copy."""
    app = create_app(ServerConfig())
    try:
        server = InProcessServer(app.mcp)
        opened = await server.call_tool("open_session", {"source": "data:image/png;base64,"
                                                         + base64.b64encode(_png()).decode()})
        session = opened.structured_content["session"]
        meta = {REQUEST_META: "resent-request-0001"}
        first = await server.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 4, 4]}, meta)
        again = await server.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 4, 4]}, meta)
        listing = await server.call_tool("list_images", {"session": session})
    finally:
        app.registry.close()
    assert first.structured_content["image"] == again.structured_content["image"] == "img_001"
    assert [i["id"] for i in listing.structured_content["images"]] == ["original", "img_001"]
    assert isinstance(first.content[1], PngBlock) and first.content[1].png == again.content[1].png


async def test_mcp_clients_of_the_same_server_still_get_base64_while_an_in_process_call_runs():
    """The PNG's form is chosen per call: an MCP client served concurrently with in-process calls on one server
    gets the standard ImageContent, whose base64 decodes to the very bytes the in-process caller holds."""
    app = create_app(ServerConfig())
    server = InProcessServer(app.mcp)
    source = "data:image/png;base64," + base64.b64encode(_png()).decode()
    direct_blocks, mcp_blocks = [], []
    try:
        async with Client(app.mcp) as client:
            opened = await client.call_tool("open_session", {"source": source})
            session = opened.structured_content["session"]
            arguments = {"session": session, "image": "original"}

            async def in_process():
                for _ in range(5):
                    result = await server.call_tool("view_image", arguments)
                    direct_blocks.append(result.content[1])

            async def over_mcp():
                for _ in range(5):
                    result = await client.call_tool("view_image", arguments)
                    mcp_blocks.append(result.content[1])

            async with anyio.create_task_group() as group:
                group.start_soon(in_process)
                group.start_soon(over_mcp)
    finally:
        app.registry.close()
    assert all(type(b) is PngBlock for b in direct_blocks)
    assert all(type(b) is ImageContent for b in mcp_blocks)
    assert {base64.b64decode(b.data) for b in mcp_blocks} == {b.png for b in direct_blocks}


def test_a_png_block_that_reaches_a_wire_is_sent_as_base64():
    png = _png()
    assert PngBlock.of(png).model_dump(mode="json", by_alias=True)["data"] == base64.b64encode(png).decode()
    assert type(image_block(png)) is ImageContent  # outside an in-process call: the standard block


@pytest.mark.parametrize("path", PATHS)
async def test_the_model_never_reads_the_servers_own_failures(path):
    """A lost session fails the sample on both paths (tests/agents/test_tool_infrastructure.py for the agent)."""
    async with ToolClient.in_process(mcp=PATHS[path]) as tools:
        info = await tools.open_session({"original": _png()})
        tools._app.registry.close_session(info.id)  # noqa: SLF001 -- evicted behind the client's back
        with pytest.raises(ToolClientError, match="lost this sample's session"):
            await tools.call(info.id, "crop", {"image": "original", "box": [0, 0, 4, 4]})
