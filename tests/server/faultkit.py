"""Faults with real processes: replicas (rediskit.start_replicas) behind a round-robin balancer, killed or starved.

The balancer stands in for HAProxy/nginx in TCP mode: each new client connection goes to the next replica
that accepts one (a dead replica is skipped, as a health check would skip it), and the bytes are copied both
ways until either side closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading

from netkit import free_port


class Balancer:
    """`with Balancer() as lb:`; start replicas with `--allowed-host lb.host`, `lb.add(url)` each."""

    def __init__(self):
        self.urls: list[str] = []  # the replicas' own endpoints
        self.backends: list[int] = []
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._turn = itertools.count()
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Balancer:
        self._thread.start()
        self._started.wait(10)
        return self

    def add(self, url: str) -> None:
        """One more replica, by its MCP endpoint."""
        self.urls.append(url)
        self.backends.append(int(url.rsplit(":", 1)[1].split("/", 1)[0]))

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(asyncio.start_server(self._forward, "127.0.0.1", self.port))
        self._started.set()
        self._loop.run_forever()

    async def _open_backend(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        start = next(self._turn)
        for step in range(len(self.backends)):  # each one once, from this connection's turn on
            port = self.backends[(start + step) % len(self.backends)]
            with contextlib.suppress(OSError):
                return await asyncio.open_connection("127.0.0.1", port)
        return None

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        backend = await self._open_backend()
        if backend is None:
            writer.close()
            return
        up_reader, up_writer = backend
        await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Bytes one way until EOF or a reset; then close the other side too, as a proxy does."""
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            sink.close()
