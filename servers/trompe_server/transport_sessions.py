"""MCP transport sessions over HTTP (the stateful protocol, before 2026-07-28) that no client can use up.

The SDK keeps up to `max_sessions` sessions and answers 503 beyond them until one idles out (30 minutes): 255
bare `initialize` POSTs, six seconds' work, locked every new client out. Here a new session is always admitted,
and beyond `max_transport_sessions` one is closed instead: first those never used past the handshake, from the
client (peer address) holding the most, least recently used first; then used ones the same way; one with a
request in flight only when nothing else is left. A session never used past the handshake is closed after
`transport_unused_timeout` seconds, a used one after `transport_idle_timeout` idle (the SDK's own timeout).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SESSION_HEADER = b"mcp-session-id"


@dataclass
class Held:
    """What the pool knows of one transport session."""

    client: str  # the peer address that opened it
    opened: float
    last: float  # when a request of it last began or ended
    used: bool = False  # answered a request beyond the handshake (a POST answered 200 with a result)
    busy: int = 0  # its requests in flight


class SessionPool:
    """ASGI middleware in front of the SDK's streamable HTTP app: tracks each session from the header the SDK
    answers with, and ends the ones it evicts through the SDK's own DELETE, so the SDK forgets them at once."""

    def __init__(self, app: Any, manager: Any, max_sessions: int, unused_timeout: float, idle_timeout: float,
                 host: str, clock: Callable[[], float] = time.monotonic):
        self.app, self.manager, self.max_sessions = app, manager, max_sessions
        self.unused_timeout, self.idle_timeout = unused_timeout, idle_timeout
        self.host = host.encode()  # a Host the SDK's DNS-rebinding check accepts, for the DELETEs sent here
        self.clock = clock
        self.held: dict[str, Held] = {}

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        await self._close_unused()
        session = dict(scope.get("headers") or []).get(SESSION_HEADER, b"").decode("latin-1")
        held = self.held.get(session)
        if held is None:
            return await self.app(scope, receive, self._watch_open(scope, send))
        held.busy += 1
        held.last = self.clock()
        try:
            await self.app(scope, receive, self._watch_use(scope, session, held, send))
        finally:
            held.busy -= 1
            held.last = self.clock()

    def _watch_open(self, scope: dict, send: Callable) -> Callable:
        """`send`, noting a session the SDK opens with this request, and making room for it."""
        client = (scope.get("client") or ("?", 0))[0]

        async def watch(message: dict) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                opened = dict(message.get("headers") or []).get(SESSION_HEADER)
                if opened:
                    now = self.clock()
                    self.held[opened.decode("latin-1")] = Held(client, now, now)
                    await self._make_room()
            await send(message)

        return watch

    def _watch_use(self, scope: dict, session: str, held: Held, send: Callable) -> Callable:
        """`send`, marking the session used when a POST of it is answered 200 (a result, not a notification's
        202), and forgetting it once the SDK has (a client's DELETE, the SDK's idle timeout: 404)."""

        async def watch(message: dict) -> None:
            if message["type"] == "http.response.start":
                status = message["status"]
                if status == 200 and scope["method"] == "POST":
                    held.used = True
                elif status == 404 or status == 200 and scope["method"] == "DELETE":
                    self.held.pop(session, None)
            await send(message)

        return watch

    async def _make_room(self) -> None:
        while len(self.held) > self.max_sessions:
            await self._close(self._victim())

    def _victim(self) -> str:
        """The session to close: idle before busy, never used before used, the client holding most first, then
        the least recently used."""
        holding = Counter(h.client for h in self.held.values())
        return min(self.held, key=lambda s: (self.held[s].busy > 0, self.held[s].used, -holding[self.held[s].client],
                                             self.held[s].last))

    async def _close_unused(self) -> None:
        """Close every session still unused `unused_timeout` seconds after it was opened, and every one idle for the
        SDK's `idle_timeout` (which the SDK has ended by then, or is about to)."""
        now = self.clock()
        for session in [s for s, h in self.held.items() if not h.busy and (
                not h.used and h.opened < now - self.unused_timeout or h.last < now - self.idle_timeout)]:
            await self._close(session)

    async def _close(self, session: str) -> None:
        """Forget the session and have the SDK end it, as a client's DELETE would (its id then answers 404)."""
        self.held.pop(session, None)
        scope = {"type": "http", "method": "DELETE", "path": "/mcp", "raw_path": b"/mcp", "root_path": "",
                 "query_string": b"", "scheme": "http", "http_version": "1.1", "client": ("127.0.0.1", 0),
                 "server": None, "headers": [(b"host", self.host), (SESSION_HEADER, session.encode())]}

        async def receive() -> dict:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: dict) -> None:
            pass

        await self.manager.handle_request(scope, receive, discard)
