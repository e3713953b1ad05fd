"""stdio without a worker thread per message: the server's pipes read and written by the event loop itself.

The SDK's stdio transport (mcp 2.3, `mcp/server/stdio.py`) reads each line and writes each reply through
anyio's worker threads, one hand-off for the read, one for the write and one for the flush. When stdin and
stdout are pipes (how an MCP client starts a server), this serves the same transport over a second,
non-blocking open file description of each pipe, opened through /proc/self/fd (O_NONBLOCK on the inherited
one would change it for every process sharing it, a shell's terminal included), and waits on them with the
event loop. The SDK's own `stdio_server` still frames and parses every message: only the byte streams under
it change. Anything else (a terminal, a file, a socket, no /proc): the SDK's transport as it is.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, contextmanager, suppress

import anyio
from mcp.server.stdio import stdio_server

PIPE_BYTES = 1 << 20  # Linux's default cap for an unprivileged process (/proc/sys/fs/pipe-max-size)
READ_BYTES = 1 << 20  # what one read takes from stdin at most (requests are small; an inline image is not)


class PipeLines:
    """stdin as the SDK's reader iterates it: text lines ending in a newline, decoded as UTF-8 (bad bytes
    replaced, as the SDK's text wrapper does); each byte is copied once however long the line."""

    def __init__(self, fd: int):
        self.fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        pending: list[bytes] = []
        while chunk := await self._read():
            *lines, rest = chunk.split(b"\n")
            for line in lines:
                yield b"".join([*pending, line, b"\n"]).decode("utf-8", "replace")
                pending.clear()
            if rest:
                pending.append(rest)
        if pending:  # a last line without its newline, as a text file yields it
            yield b"".join(pending).decode("utf-8", "replace")

    async def _read(self) -> bytes:
        while True:
            try:
                return os.read(self.fd, READ_BYTES)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)


class PipeWriter:
    """stdout as the SDK's writer uses it: each message written whole, in the order given, from the event loop;
    nothing is buffered, so flush has nothing to do."""

    def __init__(self, fd: int):
        self.fd = fd

    async def write(self, text: str) -> None:
        view = memoryview(text.encode())
        while view:
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:
                await anyio.wait_writable(self.fd)

    async def flush(self) -> None:
        """Nothing to flush: write returns once every byte is in the pipe."""


def _reopened(fd: int, flags: int) -> int | None:
    """A second, non-blocking open file description of the pipe on `fd`; None if it is no pipe or cannot be."""
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            reopened = os.open(f"/proc/self/fd/{fd}", flags | os.O_NONBLOCK | os.O_CLOEXEC)
            with suppress(OSError):
                fcntl.fcntl(reopened, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
            return reopened
    except OSError:
        pass
    return None


@contextmanager
def _diverted(fd: int, target: int):
    """`fd` points at `target` meanwhile (so a handler's stray print or read misses the wire, as with the SDK's
    transport), then back at what it was."""
    saved = os.dup(fd)
    try:
        os.dup2(target, fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


@asynccontextmanager
async def stdio_streams():
    """The server's (read, write) message streams over stdin and stdout: the event loop's own pipes where
    both are pipes that can be reopened, else the SDK's transport."""
    opened = [fd for fd in (_reopened(0, os.O_RDONLY), _reopened(1, os.O_WRONLY), _devnull()) if fd is not None]
    try:
        if len(opened) < 3:
            async with stdio_server() as streams:
                yield streams
            return
        reading, writing, null = opened
        with _diverted(0, null), _diverted(1, 2):
            async with stdio_server(stdin=PipeLines(reading), stdout=PipeWriter(writing)) as streams:
                yield streams
    finally:
        for fd in opened:
            with suppress(OSError):
                os.close(fd)


def _devnull() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
