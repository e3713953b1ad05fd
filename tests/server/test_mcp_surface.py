"""The MCP surface of the 2026-07-28 revision a desktop client meets, through the official `mcp` client: the
capabilities, the illusion method's prompts (and a saved SEVEX visual prompt) with their arguments, completions of
session and image ids (never another client's sessions over HTTP), an output schema for every tool's structured
content, cacheable lists, and progress notifications and cancellation of a long tool; and the requests
docs/server.md gives for MCP Inspector's command line, sent as written to `trompe-server` over stdio."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import threading
import time
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import PromptReference, ResourceTemplateReference
from PIL import Image

from imagekit import data_url, gradient
from test_client_key import http, served
from trompe_agents.sevex.prompt_dir import PromptDir
from trompe_agents.sevex.tree import Implementation
from trompe_prompts import read_prompt
from trompe_server import ImageId, ToolContext, ToolOutput, hookimpl
from trompe_server.app import ServerConfig, create_app
from trompe_server.lineage_app import LINEAGE_URI

SERVER_DOC = Path(__file__).resolve().parents[2] / "docs" / "server.md"
IMAGES = ResourceTemplateReference(type="ref/resource", uri="image://{session}/{image}")
STEPS = 2000  # a long tool's steps, 10 ms each: 20 s unless it is cancelled


class LongTool:
    """A tool that works in small steps, saying each one, and notes when it stopped and why (test plugin)."""

    def __init__(self):
        self.ended = threading.Event()
        self.steps = 0

    def count_slowly(self, ctx: ToolContext, image: ImageId) -> ToolOutput:
        """Count to STEPS in 10 ms steps, reporting progress at each (test plugin)."""
        try:
            for step in range(STEPS):
                ctx.progress(step, STEPS, f"step {step}")
                self.steps = step
                time.sleep(0.01)
            return ToolOutput("counted", ctx.image(image))
        finally:
            self.ended.set()

    @hookimpl
    def register_tools(self, register):
        register(self.count_slowly, tags=("test",))


async def opened(client: Client) -> str:
    result = await client.call_tool("open_session", {"source": data_url(gradient())})
    return result.structured_content["session"]


async def test_capabilities_name_tools_resources_prompts_and_completions(client):
    capabilities = client.server_capabilities
    assert capabilities.tools is not None and capabilities.resources is not None
    assert capabilities.prompts is not None and capabilities.completions is not None


async def test_the_illusion_prompts_carry_the_agents_own_texts_with_the_session_steps(client):
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert set(prompts) == {"illusion_task1", "illusion_task2", "illusion_rescue"}
    assert {a.name: a.required for a in prompts["illusion_task2"].arguments} == {
        "image": True, "question": True, "options": True}
    one = (await client.get_prompt("illusion_task1", {"image": "zollner.png", "question": "Are the lines parallel?"}))
    text = one.messages[0].content.text
    assert text.startswith(read_prompt("illusion", "task1.md").rstrip())  # the file illusion-agent sends
    assert read_prompt("illusion", "lessons.md").strip() in text
    assert "call `open_session` with source `zollner.png`" in text and text.endswith("Are the lines parallel?")
    two = await client.get_prompt("illusion_task2", {"image": "a.png", "question": "Which is longer?",
                                                     "options": "the top one\nthe bottom one\nneither\nNot sure"})
    assert two.messages[0].content.text.endswith("Options:\nA. the top one\nB. the bottom one\nC. neither\n"
                                                 "D. Not sure")
    rescue = await client.get_prompt("illusion_rescue", {"session": "s_1", "question": "Same size?"})
    assert read_prompt("illusion", "rescue.md").rstrip() in rescue.messages[0].content.text
    assert "session `s_1`" in rescue.messages[0].content.text


async def test_a_task2_prompt_with_one_option_is_refused_naming_the_argument(client):
    with pytest.raises(Exception, match="options: give 2 to 4 options, one per line; got 1"):
        await client.get_prompt("illusion_task2", {"image": "a.png", "question": "Q?", "options": "only one"})


async def test_a_saved_sevex_prompt_is_offered_with_its_score_and_arguments(tmp_path):
    """The folder is written by SEVEX's own PromptDir.save, as `sevex explore` leaves RUN/best."""
    best = PromptDir(Implementation("def visual_prompt(images):\n    return images\n", "Count the rows first."),
                     {"task": "Counting grid", "idea": "number the rows", "dev_accuracy": 0.75, "dev_size": 8}
                     ).save(tmp_path / "best")
    app = create_app(ServerConfig(roots=[tmp_path], visual_prompts=[best]))
    try:
        async with Client(app.mcp) as client:
            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            saved = prompts["sevex_counting_grid"]
            assert saved.description == "SEVEX visual prompt for Counting grid; dev accuracy 75% on 8 samples: " \
                                        "number the rows"
            assert [a.name for a in saved.arguments] == ["image", "question"]
            got = await client.get_prompt("sevex_counting_grid", {"image": "grid.png", "question": "How many rows?"})
            text = got.messages[0].content.text
            assert text.startswith("Count the rows first.") and "`sevex apply` runs both" in text
    finally:
        app.registry.close()


def test_a_folder_that_is_no_saved_prompt_is_refused_at_start(tmp_path):
    with pytest.raises(ValueError, match=r"--visual-prompt .*: not a saved visual prompt \(needs prompt.md"):
        create_app(ServerConfig(roots=[tmp_path], visual_prompts=[tmp_path]))


async def test_session_and_image_ids_complete_for_the_local_client(client):
    session = await opened(client)
    await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 8, 8]})
    sessions = await client.complete(IMAGES, {"name": "session", "value": session[:4]})
    assert sessions.completion.values == [session]
    images = await client.complete(IMAGES, {"name": "image", "value": ""}, context_arguments={"session": session})
    assert images.completion.values == ["img_001", "original"]
    assert (await client.complete(IMAGES, {"name": "image", "value": "o"}, context_arguments={"session": session})
            ).completion.values == ["original"]
    rescue = await client.complete(PromptReference(type="ref/prompt", name="illusion_rescue"),
                                   {"name": "session", "value": ""})
    assert rescue.completion.values == [session]
    gone = await client.complete(IMAGES, {"name": "image", "value": ""}, context_arguments={"session": "s_nope"})
    assert gone.completion.values == []


async def test_over_http_no_client_is_shown_the_session_ids_but_images_of_its_own_session_complete():
    async with served() as url, http(scheme=None) as one:
        async with Client(streamable_http_client(url, http_client=one)) as client:
            session = await opened(client)
            assert (await client.complete(IMAGES, {"name": "session", "value": ""})).completion.values == []
            images = await client.complete(IMAGES, {"name": "image", "value": ""},
                                           context_arguments={"session": session})
            assert images.completion.values == ["original"]


async def test_every_tool_publishes_an_output_schema_its_structured_content_meets(client):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert all(t.output_schema for t in tools.values()), [n for n, t in tools.items() if not t.output_schema]
    session = await opened(client)
    calls = {"crop": {"box": [0, 0, 8, 8]}, "get_image_size": {}, "view_image": {}}
    for name, arguments in calls.items():
        result = await client.call_tool(name, {"session": session, "image": "original", **arguments})
        jsonschema.validate(result.structured_content, tools[name].output_schema)
    listed = await client.call_tool("list_images", {"session": session})
    jsonschema.validate(listed.structured_content, tools["list_images"].output_schema)


async def test_lists_that_never_change_say_a_client_may_keep_them(client):
    for listed in (await client.list_tools(), await client.list_prompts(), await client.list_resources(),
                   await client.list_resource_templates()):
        assert (listed.ttl_ms, listed.cache_scope) == (3_600_000, "public")


async def test_a_long_tool_reports_progress_and_stops_when_cancelled_storing_nothing(make_app):
    tool = LongTool()
    app = make_app(extra_plugins={"long": tool})
    reports: list[tuple[float, float | None, str | None]] = []
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))
        if len(reports) >= 3:
            started.set()

    async with Client(app.mcp) as client:
        session = await opened(client)
        async with anyio.create_task_group() as group:
            async def call() -> None:
                await client.call_tool("count_slowly", {"session": session, "image": "original"},
                                       progress_callback=on_progress)

            group.start_soon(call)
            await started.wait()
            group.cancel_scope.cancel()  # the client gives up: notifications/cancelled
        assert await anyio.to_thread.run_sync(tool.ended.wait, 15), "the tool kept working after the cancel"
        assert tool.steps < STEPS - 1
        assert reports[:3] == [(0, STEPS, "step 0"), (1, STEPS, "step 1"), (2, STEPS, "step 2")]
        listed = await client.call_tool("list_images", {"session": session})
        assert [i["id"] for i in listed.structured_content["images"]] == ["original"]  # nothing stored


def test_a_tool_context_outside_a_call_reports_nowhere():
    """Plugins' own tests build a ToolContext by hand: progress is then a no-op, not an error."""
    from trompe_server.registry import Registry

    registry = Registry()
    session = registry.open_session("local", "original", Image.new("RGB", (4, 4)), "test")[0]
    ToolContext(registry, session).progress(1, 2, "half")
    registry.close()


def inspector_requests() -> list[tuple[str, dict[str, str]]]:
    """docs/server.md's MCP Inspector CLI lines as (method, options): `--prompt-args` as its key=value pairs."""
    block = re.search(r"```bash\n(npx @modelcontextprotocol/inspector --cli .*?)\n```", SERVER_DOC.read_text(), re.S)
    requests = []
    for line in block.group(1).replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        assert words[:4] == ["npx", "@modelcontextprotocol/inspector", "--cli", "trompe-server"], line
        options, key = {}, None
        for word in words[4:]:
            if word.startswith("--"):
                key = word[2:]
            elif key == "prompt-args":
                name, value = word.split("=", 1)
                options.setdefault("prompt-args", {})[name] = value
            else:
                options[key] = word
        requests.append((options.pop("method"), options))
    return requests


def stdio_server(folder: Path) -> StdioServerParameters:
    """`trompe-server` as a desktop client (or Inspector's --cli) launches it: no arguments, over stdio."""
    env = {name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ}
    command = shutil.which("trompe-server", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return StdioServerParameters(command=command, args=[], cwd=folder, env=env)


async def test_the_documented_inspector_requests_answer_as_the_page_says(tmp_path):
    """Each documented Inspector call, then the page's completion of image ids (which Inspector's CLI lacks)."""
    requests = inspector_requests()
    assert [method for method, _ in requests] == ["prompts/list", "prompts/get", "resources/list",
                                                  "resources/templates/list"]
    async with Client(stdio_server(tmp_path), read_timeout_seconds=120) as client:
        listed = await client.list_prompts()
        assert {p.name for p in listed.prompts} >= {"illusion_task1", "illusion_task2", "illusion_rescue"}
        get = requests[1][1]
        prompt = await client.get_prompt(get["prompt-name"], get["prompt-args"])
        text = prompt.messages[0].content.text
        assert "call `open_session` with source `zollner.png`" in text
        assert text.endswith("Are the long lines parallel?")
        assert LINEAGE_URI in [str(r.uri) for r in (await client.list_resources()).resources]  # the MCP App
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["image://{session}/{image}"]
        session = await opened(client)
        for box in ([0, 0, 8, 8], [0, 0, 4, 4], [2, 2, 6, 6]):
            await client.call_tool("crop", {"session": session, "image": "original", "box": box})
        found = await client.complete(IMAGES, {"name": "image", "value": "img_"},
                                      context_arguments={"session": session})
        assert found.completion.values == ["img_001", "img_002", "img_003"]  # as the page's snippet prints
