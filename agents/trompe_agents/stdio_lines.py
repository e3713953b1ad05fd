"""An MCP stdio transport whose reader is linear in the reply size, for trompe's own clients.

The official client's reader (mcp 2.3, `mcp/client/stdio.py`) joins its carried-over buffer to every
64 KiB chunk before splitting it, so one reply of M bytes costs O(M^2 / 64 KiB) copying: an 8 MiB image
reply takes ~290 ms of client CPU where reading it once takes ~27 ms (bench/stdio_reader.py). This
transport keeps the pieces of an unfinished line in a list and joins them once, when its newline arrives.
It is used behind the official `mcp.Client` (which accepts any transport), so nothing else changes:
the same process group, environment, message parsing and shutdown order (close stdin, wait, then
SIGTERM and SIGKILL to the group).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio
import mcp_types as types
from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

ENDED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)
READ_BYTES = 1 << 20  # one receive takes what the pipe holds (a trompe server widens its stdout pipe to 1 MiB)
GRACE_SECONDS = 2.0  # for the server to exit by itself once its stdin is closed, then again after SIGTERM


def split_lines(pending: list[bytes], chunk: bytes) -> list[bytes]:
    """The complete lines `chunk` ends; the unfinished rest stays in `pending` (each byte copied once)."""
    if b"\n" not in chunk:
        pending.append(chunk)
        return []
    head, *middle, tail = chunk.split(b"\n")
    lines = [b"".join([*pending, head]), *middle]
    pending[:] = [tail] if tail else []
    return lines


def parse(line: bytes, encoding: str, errors: str) -> SessionMessage | Exception:
    """One JSON-RPC message, or the parse error as a value for the session to surface (as the SDK does)."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line.decode(encoding, errors),
                                                                          by_name=False))
    except ValueError as exc:
        return exc


async def _wait_exit(process: anyio.abc.Process, seconds: float) -> bool:
    """Whether the process died within `seconds` (polled: a child holding the pipes makes wait() hang)."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None


@asynccontextmanager
async def linear_stdio_client(server: StdioServerParameters) -> AsyncIterator[tuple]:
    """Spawn the server in its own process group and speak newline-delimited JSON-RPC over its pipes."""
    process = await anyio.open_process([server.command, *server.args], stderr=sys.stderr, cwd=server.cwd,
                                       env=get_default_environment() | (server.env or {}), start_new_session=True)
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        pending: list[bytes] = []
        with suppress(*ENDED):
            async with to_session:
                while True:
                    for line in split_lines(pending, await process.stdout.receive(READ_BYTES)):
                        await to_session.send(parse(line, server.encoding, server.encoding_error_handler))
        with suppress(*ENDED):  # the session is gone: drain, so a server blocked on a full pipe can exit
            while True:
                await process.stdout.receive()

    async def write() -> None:
        async with from_session:
            with suppress(*ENDED):
                async for message in from_session:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(text.encode(server.encoding, server.encoding_error_handler))
            await to_session.aclose()  # the server stopped reading: end the session instead of hanging

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await write_stream.aclose()
                with suppress(*ENDED):
                    await process.stdin.aclose()
                if not await _wait_exit(process, GRACE_SECONDS):
                    await terminate_posix_process_tree(process, GRACE_SECONDS)
                    await _wait_exit(process, GRACE_SECONDS)
                await read_stream.aclose()
            tasks.cancel_scope.cancel()
