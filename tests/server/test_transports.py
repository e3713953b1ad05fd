"""A real `trompe-server` process over stdio and over streamable HTTP, through the official MCP client."""

from __future__ import annotations

import base64
import io
import signal
import subprocess

import httpx2
import numpy as np
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from PIL import Image

from imagekit import data_url, gradient, png_bytes, result_image
from signalkit import STARTS
from serverkit import SERVER, SPILL_BUDGET, env_with, free_port, same_pixels, spill_over_stdio, stop, wait_for_port
TOKEN = "test-token-8f3a"


async def exercise(client: Client) -> None:
    """Open a file by path, crop it, read the full-resolution PNG back: the path every agent takes."""
    opened = await client.call_tool("open_session", {"source": "photo.png"})
    assert not opened.is_error, opened.content[0].text
    session = opened.structured_content["session"]
    cropped = await client.call_tool("crop", {"session": session, "image": "original", "box": [8, 8, 40, 24]})
    assert cropped.structured_content["image"] == "img_001"
    assert same_pixels(result_image(cropped), gradient().crop((8, 8, 40, 24)))
    blob = (await client.read_resource(f"image://{session}/img_001")).contents[0].blob
    assert same_pixels(Image.open(io.BytesIO(base64.b64decode(blob))), gradient().crop((8, 8, 40, 24)))
    bad = await client.call_tool("crop", {"session": session, "image": "original", "box": [40, 8, 8, 24]})
    assert bad.is_error and "box:" in bad.content[0].text
    listing = await client.call_tool("list_images", {"session": session})
    assert [i["id"] for i in listing.structured_content["images"]] == ["original", "img_001"]  # no gap, no stray
    for outside in ("../photo.png", "/etc/passwd"):  # path checks hold whichever transport carries the call
        refused = await client.call_tool("open_session", {"source": outside})
        assert refused.is_error and f"source: {outside!r} is outside the allowed roots" in refused.content[0].text
    await client.call_tool("close_session", {"session": session})
    closed = await client.call_tool("list_images", {"session": session})
    assert closed.is_error and f"unknown, closed or expired session {session!r}" in closed.content[0].text


async def test_stdio_server_with_an_installed_third_party_plugin(tmp_path, example_site):
    (tmp_path / "photo.png").write_bytes(png_bytes(gradient()))
    params = StdioServerParameters(command=SERVER, args=["--root", str(tmp_path)], env=env_with(example_site))
    async with Client(params) as client:
        await exercise(client)
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["posterize"].meta == {"tags": ["example"], "plugin": "posterize"}
        session = (await client.call_tool("open_session", {"source": "photo.png"})).structured_content["session"]
        result = await client.call_tool("posterize", {"session": session, "image": "original", "bits": 1})
        assert not result.is_error, result.content[0].text
        assert set(np.unique(np.asarray(result_image(result)))) <= {0, 128}  # one bit per channel: 0 or 128
        bad = await client.call_tool("posterize", {"session": session, "image": "original", "bits": 12})
        assert bad.is_error and "bits: 12 is out of range; accepted: 1 to 8" in bad.content[0].text


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """A token-protected HTTP server on a free loopback port, shared by this module's tests; yields its URL."""
    root = tmp_path_factory.mktemp("http-root")
    (root / "photo.png").write_bytes(png_bytes(gradient()))
    port = free_port()
    proc = subprocess.Popen([SERVER, "--http", "--port", str(port), "--root", str(root)],
                            env=env_with(TROMPE_TOKEN=TOKEN), stderr=subprocess.PIPE, text=True)
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


async def test_http_server_with_token(http_server):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"},
                                  timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(http_server, http_client=http)) as client:
            await exercise(client)


@pytest.mark.parametrize("headers", [{"Authorization": "Bearer wrong"}, {}])
async def test_http_refuses_missing_or_wrong_token(http_server, headers):
    with pytest.RaisesGroup(pytest.RaisesExc(MCPError, match="missing or wrong bearer token"), flatten_subgroups=True):
        async with httpx2.AsyncClient(headers=headers) as http:
            async with Client(streamable_http_client(http_server, http_client=http)) as client:
                await client.list_tools()
    async with httpx2.AsyncClient() as http:
        response = await http.post(http_server, headers=headers, json={"jsonrpc": "2.0", "id": 1,
                                                                       "method": "tools/list"})
    assert response.status_code == 401 and "bearer token" in response.text


async def test_http_body_over_the_cap_is_refused_naming_the_limit(tmp_path):
    """The SDK's own 413 is plain text, which the client reports as "Server returned an error response"."""
    port = free_port()
    proc = subprocess.Popen([SERVER, "--http", "--port", str(port), "--max-source-bytes", "1MiB"],
                            env=env_with(TROMPE_TOKEN=TOKEN), stderr=subprocess.PIPE, text=True)
    try:
        wait_for_port(port, proc)
        huge = "data:image/png;base64," + base64.b64encode(bytes(5 * 1024 * 1024)).decode()
        limit = "4194304-byte limit; images travel as base64"
        with pytest.RaisesGroup(pytest.RaisesExc(MCPError, match=limit), flatten_subgroups=True):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
                async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
                    await client.call_tool("open_session", {"source": huge})
    finally:
        stop(proc)


@pytest.mark.parametrize("header, value, status", [("Host", "evil.example", 421),
                                                   ("Origin", "http://evil.example", 403)])
async def test_http_dns_rebinding_protection(http_server, header, value, status):
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream", header: value}
    async with httpx2.AsyncClient() as http:
        response = await http.post(http_server, headers=headers, json={"jsonrpc": "2.0", "id": 1,
                                                                       "method": "tools/list"})
    assert response.status_code == status, response.text


def test_non_loopback_bind_needs_a_token():
    done = subprocess.run([SERVER, "--http", "--host", "0.0.0.0", "--port", str(free_port())], env=env_with(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2  # options that contradict each other: a usage error (exits.py)
    assert "refusing to bind 0.0.0.0: a non-loopback host needs a bearer token (--token or TROMPE_TOKEN)" \
        in done.stderr


async def spill_over_http(url: str) -> None:
    """Open a session and crop it whole through the official client, as spill_over_stdio does over stdio."""
    async with Client(streamable_http_client(url)) as client:
        opened = await client.call_tool("open_session", {"source": data_url(gradient())})
        session = opened.structured_content["session"]
        crop = await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 64, 48]})
        assert not crop.is_error, crop.content[0].text


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(("signum", "started"), [(signal.SIGTERM, "script"), (signal.SIGHUP, "script"),
                                                 (signal.SIGINT, "terminal")], ids=["SIGTERM", "SIGHUP", "SIGINT"])
async def test_terminated_server_removes_its_spill_folder(tmp_path, transport, signum, started):
    """SIGTERM (a service stop), SIGHUP (its terminal closed) or Ctrl-C removes the folder a server spilled pixels
    to, however it was started (signalkit.py); SPILL_BUDGET makes it spill."""
    port = free_port()
    args = ["--http", "--port", str(port)] if transport == "http" else []
    proc = subprocess.Popen([SERVER, "--memory-budget", SPILL_BUDGET, *args], env=env_with(TMPDIR=str(tmp_path)),
                            stdout=subprocess.PIPE if transport == "stdio" else None,
                            stderr=subprocess.PIPE, text=True, **{**STARTS[started], "stdin": subprocess.PIPE})
    try:
        if transport == "http":
            wait_for_port(port, proc)
            await spill_over_http(f"http://127.0.0.1:{port}/mcp")
        else:
            assert "serving" in proc.stderr.readline()  # the banner comes after the SIGTERM handler is installed
            spill_over_stdio(proc)
        assert [list(folder.iterdir()) != [] for folder in tmp_path.glob("trompe-spill-*")] == [True]
        proc.send_signal(signum)
        assert proc.wait(timeout=30) == 0
        assert not list(tmp_path.glob("trompe-spill-*"))
    finally:
        stop(proc)
