"""The stdio server writes and reads its pipes from the event loop (stdio_pipes.py): same bytes as the SDK's transport,
whole messages of any size, and the descriptors it inherited left as they were."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from imagekit import data_url, noise, result_image
from mcp import Client, StdioServerParameters
from serverkit import INITIALIZE, SERVER, env_with, same_pixels

REQUESTS = [
    json.dumps(INITIALIZE) + "\n",
    '{"jsonrpc": "2.0", "method": "notifications/initialized"}\n',
    '{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}\r\n',  # a client that ends lines in CRLF
    '{"jsonrpc": "2.0", "id": 3, "method": "ping"}\n',
    '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}\n',
    '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "open_session", '
    '"arguments": {"source": "not/there.png"}}}\n',
]


def _replies(stdout, read_back) -> list[str]:
    """Send REQUESTS (the last one in two writes, apart), wait for the five replies, close stdin; the lines."""
    proc = subprocess.Popen([SERVER, "--root", str(Path.cwd())], stdin=subprocess.PIPE, stdout=stdout,
                            stderr=subprocess.DEVNULL, env=env_with())
    try:
        for request in REQUESTS[:-1]:
            proc.stdin.write(request.encode())
            proc.stdin.flush()
        last = REQUESTS[-1].encode()
        proc.stdin.write(last[:20])
        proc.stdin.flush()
        time.sleep(0.2)
        proc.stdin.write(last[20:])
        proc.stdin.flush()
        lines = read_back(5)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return sorted(lines)


def test_replies_are_the_sdk_transports_byte_for_byte(tmp_path):
    """stdout a pipe: the server's own pipes; stdout a file: the SDK's transport. The same lines come out."""
    read, write = os.pipe()
    with os.fdopen(read, "rb") as pipe:
        def from_pipe(count: int) -> list[bytes]:
            return [pipe.readline() for _ in range(count)]

        through_pipes = _replies(write, from_pipe)
        os.close(write)
    file = tmp_path / "stdout"
    with file.open("wb") as out:
        def from_file(count: int) -> list[bytes]:
            deadline = time.monotonic() + 120
            while file.read_bytes().count(b"\n") < count and time.monotonic() < deadline:
                time.sleep(0.05)
            return file.read_bytes().splitlines(keepends=True)

        through_sdk = _replies(out, from_file)
    assert [json.loads(line)["id"] for line in through_pipes] == [1, 2, 3, 4, 5]
    assert through_pipes == through_sdk


def test_the_stdout_a_caller_shares_stays_blocking():
    """The pipe's inherited description is the caller's too (a shell's terminal, a `| tee`): never made
    non-blocking, or the caller's own writes would fail with EAGAIN."""
    read, write = os.pipe()
    proc = subprocess.Popen([SERVER], stdin=subprocess.PIPE, stdout=write, stderr=subprocess.DEVNULL,
                            env=env_with())
    try:
        proc.stdin.write(REQUESTS[0].encode())
        proc.stdin.flush()
        with os.fdopen(read, "rb") as pipe:
            assert json.loads(pipe.readline())["id"] == 1  # serving
            assert os.get_blocking(write)
            proc.stdin.close()
            proc.wait(timeout=60)
    finally:
        os.close(write)
        if proc.poll() is None:
            proc.kill()


async def test_messages_larger_than_a_pipe_arrive_whole(tmp_path):
    """A 4 MiB request (an inline image) and 4 MiB replies, across many reads and partial writes."""
    image = noise((1024, 1024))  # nothing compresses: the PNG is ~3 MiB, ~4 MiB in base64
    params = StdioServerParameters(command=SERVER, args=["--root", str(tmp_path), "--max-source-bytes", "64MiB"],
                                   env=env_with())
    async with Client(params) as client:
        opened = await client.call_tool("open_session", {"source": data_url(image)})
        assert not opened.is_error, opened.content[0].text
        session = opened.structured_content["session"]
        for _ in range(3):
            viewed = await client.call_tool("view_image", {"session": session, "image": "original"})
            assert same_pixels(result_image(viewed).convert("RGB"), image)
