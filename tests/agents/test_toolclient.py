"""The tool client against a real trompe server: in-process, stdio subprocess and streamable HTTP."""

from __future__ import annotations

import io
import logging
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest
from imagekit import gradient, png_bytes
from netkit import free_port
from PIL import Image
from mcp.server.mcpserver import Context
from trompe_agents.toolclient import ToolClient, ToolClientError, ToolInfrastructureError, image_data_url
from trompe_server.app import ServerConfig


async def crop_round_trip(tools: ToolClient) -> None:
    """What every transport must do: open, list, run a tool, read back exact pixels, close."""
    im = gradient(64, 48)
    info = await tools.open_session({"original": png_bytes(im), "image_2": png_bytes(gradient(20, 10))})
    assert info.sizes == {"original": (64, 48), "image_2": (20, 10)}
    schemas = {t.name: t for t in await tools.list_tools()}
    assert {"crop", "view_image", "list_images"} <= set(schemas)
    assert not {"open_session", "add_image", "close_session"} & set(schemas)
    for schema in schemas.values():
        assert "session" not in schema.parameters.get("properties", {})
        assert "session" not in schema.parameters.get("required", [])
    result = await tools.call(info.id, "crop", {"image": "original", "box": [8, 4, 24, 20]})
    assert not result.is_error, result.text
    assert [p.id for p in result.images] == ["img_001"]
    assert result.structured["parents"] == ["original"]
    expected = im.crop((8, 4, 24, 20))
    assert Image.open(io.BytesIO(result.images[0].data)).convert("RGB").tobytes() == expected.tobytes()
    full = Image.open(io.BytesIO(await tools.image_png(info.id, "img_001")))
    assert full.size == (16, 16)
    await tools.close_session(info.id)
    with pytest.raises(ToolInfrastructureError, match="crop: the tool server lost this sample's session .*"
                       "unknown, closed or expired session") as gone:  # the sample fails: never the model's error
        await tools.call(info.id, "crop", {"image": "original", "box": [0, 0, 4, 4]})
    assert gone.value.kind == "tool_infrastructure"
    with pytest.raises(ToolInfrastructureError, match="lost this sample's session"):
        await tools.image_png(info.id, "original")
    await tools.close_session(info.id)  # closing a session already gone is no error


async def test_in_process_round_trip():
    async with ToolClient.in_process(ServerConfig()) as tools:
        await crop_round_trip(tools)


async def test_in_process_server_leaves_the_users_logging_alone(monkeypatch):
    """MCPServer calls logging.basicConfig(INFO); in a script that would print a line per vendor HTTP request."""
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    monkeypatch.setattr(root, "level", logging.WARNING)
    async with ToolClient.in_process() as tools:
        assert "crop" in {t.name for t in await tools.list_tools()}
    assert (root.handlers, root.level) == ([], logging.WARNING)
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)


async def test_tool_errors_come_back_as_results_naming_the_problem():
    async with ToolClient.in_process() as tools:
        info = await tools.open_session({"original": png_bytes(gradient())})
        bad_id = await tools.call(info.id, "crop", {"image": "img_042", "box": [0, 0, 4, 4]})
        assert bad_id.is_error and "img_042" in bad_id.text and "original" in bad_id.text
        missing = await tools.call(info.id, "crop", {"image": "original"})
        assert missing.is_error and "box" in missing.text


async def test_filters_by_tag_and_allow_list():
    async with ToolClient.in_process() as tools:
        analysis = {t.name for t in await tools.list_tools(tags=["analysis"])}
        assert {"sample_color", "view_image", "list_images"} <= analysis and "crop" not in analysis
        assert {t.name for t in await tools.list_tools(tags=["core"])} >= {"crop", "view_image"}
        with pytest.raises(ToolClientError, match="no tool has tag no-such-tag; the server's tools have: .*core"):
            await tools.list_tools(tags=["no-such-tag"])
        assert [t.name for t in await tools.list_tools(allow=["crop"])] == ["crop"]
        with pytest.raises(ToolClientError, match="bogus.*available: .*crop"):
            await tools.list_tools(allow=["crop", "bogus"])


async def test_open_session_reports_a_bad_image_and_leaves_no_session(tmp_path):
    path = tmp_path / "q.png"
    gradient(30, 20).save(path)
    async with ToolClient.in_process() as tools:
        info = await tools.open_session({"original": path})  # a Path is read here and sent as a data: URL
        assert info.sizes == {"original": (30, 20)}
        with pytest.raises(ToolClientError, match="source"):
            await tools.open_session({"original": path, "image_2": b"not an image"})
        with pytest.raises(ValueError, match="images is empty"):
            await tools.open_session({})


def test_data_url_names_the_real_format():
    buf = io.BytesIO()
    gradient(4, 4).save(buf, format="JPEG")
    assert image_data_url(buf.getvalue()).startswith("data:image/jpeg;base64,")
    assert image_data_url(png_bytes(gradient(4, 4))).startswith("data:image/png;base64,")


def server_command() -> list[str]:
    exe = shutil.which("trompe-server", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trompe_server.cli"]


async def test_stdio_subprocess_round_trip():
    async with ToolClient.stdio([*server_command(), "--tools", "core"]) as tools:
        await crop_round_trip(tools)



@pytest.fixture
def http_server():
    """A real `trompe-server --http --token` subprocess on a free loopback port."""
    port = free_port()
    proc = subprocess.Popen([*server_command(), "--http", "--port", str(port), "--token", "s3cret"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)


async def test_http_round_trip_with_bearer_token(http_server):
    async with ToolClient.http(http_server, token="s3cret") as tools:
        await crop_round_trip(tools)


async def test_http_wrong_token_is_refused(http_server):
    with pytest.raises(ToolClientError, match="cannot reach the tool server.*--token"):
        async with ToolClient.http(http_server, token="wrong"):
            pass


async def test_a_client_can_be_opened_again_after_closing(http_server):
    client = ToolClient.http(http_server, token="s3cret")
    for _ in range(2):
        async with client as tools:
            assert "crop" in {t.name for t in await tools.list_tools()}


async def test_tool_list_is_fetched_once_per_connection_until_the_server_says_it_changed():
    """The second listing is served from the cache (a tool added since is not seen) until the server sends a
    real notifications/tools/list_changed (handshake-era connection, where the SDK delivers it)."""
    tools = ToolClient.in_process(mcp=True)  # notifications are MCP's: the in-process path has none to send
    tools.mode = "legacy"
    server = tools._app.mcp

    async def announce(ctx: Context) -> str:
        """Add a tool and tell the clients, as a server whose tools change at run time would."""
        server.add_tool(lambda session: "hi", name="late_tool", meta={"tags": ["core"]})
        await ctx.session.send_tool_list_changed()
        return "announced"

    async with tools:
        first = [t.name for t in await tools.list_tools(tags=["core"])]
        server.add_tool(announce, name="announce", meta={"tags": ["core"]})
        assert [t.name for t in await tools.list_tools(tags=["core"])] == first  # cached: no new request
        await tools.client.call_tool("announce", {})  # the notification arrives before this call's reply
        assert {"announce", "late_tool"} <= {t.name for t in await tools.list_tools(tags=["core"])}
    async with tools:  # a new connection lists afresh
        assert "late_tool" in {t.name for t in await tools.list_tools()}


async def test_a_server_that_is_gone_fails_calls_as_infrastructure_and_the_client_stays_usable():
    """No replica answers: every resend fails to connect; the caller gets a typed error, not a cancelled task."""
    port = free_port()
    proc = subprocess.Popen([*server_command(), "--http", "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.1)
        tools = ToolClient.http(f"http://127.0.0.1:{port}/mcp")
        tools.retry_delay = 0.05
        async with tools:
            info = await tools.open_session({"original": png_bytes(gradient())})
            proc.terminate()  # (SIGTERM, so that it removes its spill folder)
            proc.wait(30)
            for _ in range(2):  # the client survives the first failure and fails the same way again
                with pytest.raises(ToolInfrastructureError, match=r"crop: the tool server \(http://127.0.0.1:\d+/mcp"
                                   r"\) failed 5 times; last: .*(ConnectError|connect|Connection)"):
                    await tools.call(info.id, "crop", {"image": "original", "box": [0, 0, 4, 4]})
            await tools.close_session(info.id)  # logged, not raised: the session expires on the server
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)
