"""`trompe/shared-pixels` through the official MCP client and real `trompe-server` processes: a stdio client on this
host that declares it gets each image as a sealed memfd; every other client gets today's PNG reply, byte for byte.

The capability is declared as mcp.Client can (an SEP-2133 extension via `mcp.client.advertise`; its `experimental`
is always None); the client reads the segment here as any third-party client would, from /proc/<pid>/fd/<fd>.
"""

from __future__ import annotations

import base64
import fcntl
import io
import json
import mmap
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client import advertise
from PIL import Image

from imagekit import data_url, noise
from serverkit import SERVER, env_with, free_port, same_pixels, stop, wait_for_port
from trompe_server.pixel_segments import CAPABILITY, SEALS, VERSION, offer
from unprivileged import run_as_nobody

DRAW = {"image": "original", "start": [0, 0], "end": [95, 63], "width": 3}
PICTURE = noise((96, 64))


def stdio(*flags: str) -> StdioServerParameters:
    return StdioServerParameters(command=SERVER, args=list(flags), env=env_with())


def declaring(settings: dict | None = None) -> list:
    return [advertise(CAPABILITY, offer() if settings is None else settings)]


async def draw(client: Client, tool: str = "draw_line", arguments: dict | None = None):
    """Open a session on PICTURE and run one tool on it; returns the session and the result."""
    opened = await client.call_tool("open_session", {"source": data_url(PICTURE)})
    session = opened.structured_content["session"]
    result = await client.call_tool(tool, {"session": session, **(arguments or DRAW)})
    assert not result.is_error, result.content[0].text
    return session, result


def segment_path(result) -> str:
    descriptor = result.meta[CAPABILITY]
    return f"/proc/{descriptor['pid']}/fd/{descriptor['fd']}"


def map_segment(result) -> mmap.mmap:
    """A reply's segment mapped read-only, as a client on this host would, after checking it is the one described."""
    descriptor = result.meta[CAPABILITY]
    handle = os.open(segment_path(result), os.O_RDONLY)
    try:
        assert os.fstat(handle).st_ino == descriptor["inode"]
        assert fcntl.fcntl(handle, fcntl.F_GET_SEALS) & SEALS == SEALS
        return mmap.mmap(handle, descriptor["size"], mmap.MAP_SHARED, mmap.PROT_READ)
    finally:
        os.close(handle)


def pixels_of(result, region: mmap.mmap) -> Image.Image:
    descriptor = result.meta[CAPABILITY]
    return Image.frombytes(descriptor["mode"], (descriptor["width"], descriptor["height"]), region[:])


def read_segment(result) -> Image.Image:
    return pixels_of(result, map_segment(result))


async def full_png(client: Client, session: str, image: str) -> Image.Image:
    blob = (await client.read_resource(f"image://{session}/{image}")).contents[0].blob
    return Image.open(io.BytesIO(base64.b64decode(blob)))


def segments_of(pid: int) -> list[str]:
    """The pixel segments a process holds open."""
    fds = Path(f"/proc/{pid}/fd")
    return [fd.name for fd in fds.iterdir() if os.readlink(fd).startswith("/memfd:trompe-pixels")]


async def test_a_declaring_stdio_client_gets_the_full_pixels_in_a_sealed_segment():
    async with Client(stdio(), extensions=declaring()) as client:
        session, result = await draw(client)
        assert [c.type for c in result.content] == ["text", "resource_link"]  # no PNG, no base64
        assert result.structured_content["image"] == "img_001" and result.structured_content["created"]
        stored = await full_png(client, session, "img_001")
        assert same_pixels(read_segment(result), stored)
        assert result.meta[CAPABILITY] | {"version": VERSION} == result.meta[CAPABILITY]
        viewed = await client.call_tool("view_image", {"session": session, "image": "original"})
        assert same_pixels(read_segment(viewed), PICTURE)


async def test_every_other_client_gets_the_png_reply_unchanged(tmp_path):
    """The same call's reply, byte for byte: without the capability, with another host's or version's, over HTTP
    even when declared, and from an in-process server (shared pixels off)."""
    from trompe_server.app import ServerConfig, create_app

    replies = []
    for settings in (None, {"version": VERSION, "boot_id": "another-host"}, offer() | {"version": VERSION + 1}):
        async with Client(stdio(), extensions=declaring(settings) if settings else None) as client:
            replies.append(await draw(client))
    app = create_app(ServerConfig(roots=[tmp_path]))
    async with Client(app.mcp) as client:
        replies.append(await draw(client))
    app.registry.close()
    port = free_port()
    proc = subprocess.Popen([SERVER, "--http", "--port", str(port)], env=env_with(), stderr=subprocess.PIPE, text=True)
    try:
        wait_for_port(port, proc)
        async with Client(f"http://127.0.0.1:{port}/mcp", extensions=declaring()) as client:
            replies.append(await draw(client))
    finally:
        stop(proc)
    assert [c.type for c in replies[0][1].content] == ["text", "image", "resource_link"]
    assert all(CAPABILITY not in (result.meta or {}) for _, result in replies)
    assert len({reply_bytes(*reply) for reply in replies}) == 1


def reply_bytes(session: str, result) -> str:
    """A reply's content and structure as JSON, its session id (random per server) written as SESSION."""
    return json.dumps([result.model_dump(by_alias=True, include={"content", "structured_content", "is_error"})]
                      ).replace(session, "SESSION")


async def test_nobody_can_write_a_segment_not_even_root():
    """The kernel's seals: no write, no resize, no writable mapping, no seal removed; the registry's image stays."""
    async with Client(stdio(), extensions=declaring()) as client:
        session, result = await draw(client)
        handle = os.open(segment_path(result), os.O_RDWR)
        try:
            for attack in (lambda: os.pwrite(handle, b"\0" * 16, 0), lambda: os.ftruncate(handle, 1),
                           lambda: mmap.mmap(handle, 16, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE),
                           lambda: fcntl.fcntl(handle, fcntl.F_ADD_SEALS, 0)):
                with pytest.raises(PermissionError):
                    attack()
        finally:
            os.close(handle)
        assert same_pixels(read_segment(result), await full_png(client, session, "img_001"))


def test_another_user_cannot_open_a_segment(tmp_path):
    """/proc/<pid>/fd is the server user's alone: `nobody` cannot reach a root server's pixels."""
    script = tmp_path / "server.py"  # a root server that declares itself, prints where a segment is, and waits
    script.write_text(textwrap.dedent(f"""
        import anyio, sys
        from mcp import Client, StdioServerParameters
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_zero_copy import declaring, draw, segment_path, stdio
        async def main():
            async with Client(stdio(), extensions=declaring()) as client:
                print(segment_path((await draw(client))[1]), flush=True)
                sys.stdin.readline()
        anyio.run(main)
    """))
    holder = subprocess.Popen([sys.executable, str(script)], env=env_with(PYTHONPATH=os.pathsep.join(sys.path)),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        path = holder.stdout.readline().strip()
        assert path.startswith("/proc/") and os.open(path, os.O_RDONLY) >= 0
        probe = run_as_nobody(["-c", f"import os\ntry:\n os.open({path!r}, os.O_RDONLY)\n print('opened')\n"
                                     "except PermissionError:\n print('refused')"], timeout=60)
        assert probe.stdout.strip() == "refused", probe.stderr
    finally:
        holder.communicate("\n", timeout=60)


async def test_segments_go_with_their_session_and_fit_half_the_memory_budget():
    """Closed: its segments are closed. Over half the budget: the oldest go first; an image that alone would not
    fit comes back as PNG. A client that mapped a segment keeps its pixels after the server closes it."""
    image_bytes = 96 * 64 * 3
    async with Client(stdio("--memory-budget", str(5 * image_bytes)), extensions=declaring()) as client:
        session, first = await draw(client)
        expected = await full_png(client, session, "img_001")
        pid = first.meta[CAPABILITY]["pid"]
        region = map_segment(first)
        for n in range(3):
            result = await client.call_tool("draw_line", {"session": session, **DRAW})
            assert result.meta[CAPABILITY]["image"] == f"img_{n + 2:03d}"
        assert len(segments_of(pid)) == 2  # 2.5 images' bytes: the two newest
        await client.call_tool("close_session", {"session": session})
        assert segments_of(pid) == []
        assert same_pixels(pixels_of(first, region), expected)
    async with Client(stdio("--memory-budget", str(30_000)), extensions=declaring()) as client:
        _, result = await draw(client)
        assert CAPABILITY not in (result.meta or {})
        assert [c.type for c in result.content] == ["text", "image", "resource_link"]



async def test_an_evicted_sessions_segments_go_at_the_next_reply():
    async with Client(stdio("--max-sessions", "1"), extensions=declaring()) as client:
        _, first = await draw(client)
        pid = first.meta[CAPABILITY]["pid"]
        assert len(segments_of(pid)) == 1
        _, second = await draw(client)  # its open_session evicted the first session
        assert segments_of(pid) == [str(second.meta[CAPABILITY]["fd"])]


def test_a_client_may_declare_it_under_experimental():
    """The MCP field for non-standard capabilities, as a client without SEP-2133 extensions sends it in `initialize`
    (raw JSON-RPC lines over the server's pipes)."""
    proc = subprocess.Popen([SERVER], env=env_with(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)

    def ask(message: dict) -> dict:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0"} | message) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline()) if "id" in message else {}

    try:
        ask({"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "clientInfo": {"name": "raw", "version": "0"},
            "capabilities": {"experimental": {CAPABILITY: offer()}}}})
        ask({"method": "notifications/initialized"})
        opened = ask({"id": 2, "method": "tools/call", "params": {"name": "open_session",
                                                                   "arguments": {"source": data_url(PICTURE)}}})
        session = opened["result"]["structuredContent"]["session"]
        drawn = ask({"id": 3, "method": "tools/call", "params": {"name": "draw_line",
                                                                  "arguments": {"session": session, **DRAW}}})
        descriptor = drawn["result"]["_meta"][CAPABILITY]
        assert [c["type"] for c in drawn["result"]["content"]] == ["text", "resource_link"]
        assert (descriptor["width"], descriptor["height"], descriptor["mode"]) == (96, 64, "RGB")
        assert os.readlink(f"/proc/{descriptor['pid']}/fd/{descriptor['fd']}").startswith("/memfd:trompe-pixels")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def test_segments_count_against_the_memory_budget(tmp_path):
    """While a segment lives the registry keeps that many fewer pixel bytes in RAM (here: the original spills to
    disk); closing the session's segments gives the bytes back."""
    from trompe_server.app import ServerConfig, create_app
    from trompe_server.limits import Limits

    held, in_ram = 96 * 64 * 3, 96 * 64 * 4  # the segment packs RGB; the registry keeps Pillow's 4 bytes a pixel
    app = create_app(ServerConfig(roots=[tmp_path], same_host_pixels=True,
                                  limits=Limits(memory_budget=40_000)))  # half of it holds one segment
    try:
        session, record = app.registry.open_session("local", "original", noise((96, 64)), "test")
        assert app.registry.bytes_in_memory == in_ram
        app.image_result(session, record, "shown", created=False, shared=True)
        assert (app.segments.nbytes, app.registry.pinned, app.registry.bytes_in_memory) == (held, held, 0)
        app.segments.drop_session(session)
        assert (app.segments.nbytes, app.registry.pinned) == (0, 0)
        app.registry.add_input(session, "image_2", noise((96, 64), seed=3), "test")
        assert app.registry.bytes_in_memory == in_ram  # the budget is whole again: a new image stays in RAM
    finally:
        app.registry.close()
