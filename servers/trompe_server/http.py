"""Streamable HTTP transport: loopback by default, bearer token required beyond it."""

from __future__ import annotations

import asyncio
import errno
import hmac
import ipaddress
import json
import logging
import resource
import socket
import sys
import time

import h11
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import ClientDisconnect
from uvicorn.protocols.http.h11_impl import H11Protocol

from trompe_kernel.exits import FAILED, exit_with

from .limits import Limits
from .transport_sessions import SessionPool

logger = logging.getLogger(__name__)
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
FD_RESERVE = 64  # descriptors kept free for image files, spill files and the event loop itself
BODY_GRACE = 2.0  # seconds a request body may take before min_body_rate applies (TCP slow start, a busy client)
# An idle kept-alive connection is closed after KEEP_ALIVE seconds: longer than the 5 s after which httpx, the
# MCP SDK's client, stops reusing one, so the client always retires it first. With both at 5 s, a loaded client
# sent its next request into a connection the server was closing that moment, and got a reset.
KEEP_ALIVE = 15.0
LINGER = 2.0  # seconds a connection answered 408 is still read (and the bytes dropped) before it is closed
UNAUTHORIZED = "missing or wrong bearer token: send the server's --token as 'Authorization: Bearer TOKEN'"


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def security_settings(host: str, port: int, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection stays on: only the bound host (and any named extras) may be addressed."""
    hosts = {f"{h}:{port}" for h in ("127.0.0.1", "localhost", "[::1]")} | {f"{host}:{port}"}
    hosts |= {h if ":" in h else f"{h}:{port}" for h in allowed_hosts}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(hosts),
        allowed_origins=sorted(f"http://{h}" for h in hosts),
    )


async def send_error(send, status: int, message: str, headers: tuple = ()) -> None:
    """Answer with a JSON-RPC error body, so MCP clients show this message instead of a generic one."""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *headers]})
    await send({"type": "http.response.body", "body": json.dumps({
        "jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}).encode()})


class BearerAuth:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`.

    The whole token is compared in constant time (a prefix, a suffix or another case is refused); only the
    scheme's case is free, as RFC 7235 section 2.1 makes it."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            scheme, _, given = dict(scope.get("headers") or []).get(b"authorization", b"").partition(b" ")
            if not (hmac.compare_digest(given, self.expected) and scheme.lower() == b"bearer"):
                await send_error(send, 401, UNAUTHORIZED, ((b"www-authenticate", b'Bearer realm="trompe"'),))
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """ASGI middleware: a body declared over the cap is refused naming the limit (the SDK's 413 is plain text)."""

    def __init__(self, app, max_body: int):
        self.app, self.max_body = app, max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
            if declared.isdigit() and int(declared) > self.max_body:
                await send_error(send, 413, f"request body: {int(declared)} bytes, over this server's "
                                 f"{self.max_body}-byte limit; images travel as base64 (4/3 of the file size): "
                                 "send a smaller image or start the server with a larger --max-source-bytes")
                return
        await self.app(scope, receive, send)


def _raw_response(status: str, message: str) -> bytes:
    """A complete HTTP/1.1 response with a JSON-RPC error body, written before h11 has seen a request."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}).encode()
    return (f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n").encode() + body


def guarded_protocol(max_connections: int, header_timeout: float, read_timeout: float,
                     min_body_rate: int) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol with a connection cap and deadlines, so slow clients cannot hold sockets.

    A body must also keep up `min_body_rate` bytes a second on average after its first BODY_GRACE seconds:
    without it, one byte every few seconds keeps a connection open as long as the client likes (with a token
    such a client is answered 401 before its body is read; without one, nothing else stops it).
    """

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _body_start: float | None = None  # loop time the current request's body began
        _body_bytes = 0
        _answered = False  # a 408 was sent: what the client still sends is read and dropped until it closes

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.write(_raw_response("503 Service Unavailable", f"server busy: {max_connections} "
                                              "connections are open (max_connections); retry shortly"))
                transport.close()
                return
            self._arm(header_timeout)

        def data_received(self, data: bytes) -> None:
            if self._answered:
                return
            super().data_received(data)
            state = self.conn.their_state
            if state is h11.SEND_BODY:
                now = self.loop.time()
                if self._body_start is None:
                    self._body_start, self._body_bytes = now, 0
                self._body_bytes += len(data)
                behind = self._body_start + BODY_GRACE + self._body_bytes / min_body_rate  # when it falls behind
                self._arm(max(0.0, min(read_timeout, behind - now)))  # nor may it stall longer than read_timeout
                return
            self._body_start = None
            if state is h11.IDLE:
                if self._deadline is None:
                    self._arm(header_timeout)  # counted from the request's first byte, not reset per byte
            else:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.flow.read_paused:  # the server stopped reading (its buffer is full), not the client
                self._body_start = None  # the body's rate is measured afresh once the server reads again
                self._arm(read_timeout)
                return
            if not self.transport.is_closing():
                self._answer_and_linger(_raw_response("408 Request Timeout", "request not received in time "
                                                      f"(header_timeout {header_timeout:g} s, read_timeout "
                                                      f"{read_timeout:g} s, min_body_rate {min_body_rate} "
                                                      "bytes/s)"))

        def _answer_and_linger(self, response: bytes) -> None:
            """Send `response` and a FIN, then drop what the client still sends until it closes or LINGER passes.

            A client cut mid-request is still sending; closing at once, with its bytes unread or still arriving,
            makes the kernel answer with a reset, which can reach the client before it has read the 408.
            """
            self._answered = True
            self.transport.write(response)
            self.transport.write_eof()  # the FIN follows the reply; the client's EOF then closes the transport
            self._deadline = self.loop.call_later(LINGER, self.transport.close)

    return GuardedH11Protocol


def connection_cap(requested: int) -> int:
    """The connection cap, lowered to fit the process's descriptor limit so accept() never runs out."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    usable = soft - FD_RESERVE if soft != resource.RLIM_INFINITY else requested
    if usable < 1:
        raise exit_with(f"trompe-server: only {soft} file descriptors allowed (ulimit -n); "  # the setting: 2
                        f"HTTP needs more than {FD_RESERVE}: raise it with ulimit -n 4096")
    if requested > usable:
        print(f"trompe-server: max_connections lowered from {requested} to {usable} to fit the descriptor "
              f"limit ({soft}, ulimit -n)", file=sys.stderr)
    return min(requested, usable)


class AcceptErrors:
    """Loop exception handler: running out of descriptors in accept() is one log line a second, not a crash."""

    def __init__(self):
        self.last = 0.0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
            if time.monotonic() - self.last > 1:
                self.last = time.monotonic()
                print(f"trompe-server: refusing connections for now: {exc.strerror} "
                      "(lower --max-connections or raise ulimit -n)", file=sys.stderr, flush=True)
            return
        loop.default_exception_handler(context)


def client_went_away(record: logging.LogRecord) -> bool:
    """Logging filter: drop the SDK's traceback for a request whose client hung up (or was cut off) mid-body.

    It is the client's doing, already answered (408) or unanswerable, and rendering 64 rich tracebacks at once
    blocked the event loop for 12 s: every other client waited.
    """
    return not (record.exc_info and isinstance(record.exc_info[1], ClientDisconnect))


def bind(host: str, port: int) -> socket.socket:
    """Bind the listening socket here, so a busy port is a one-line error rather than uvicorn's log."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Naming the protocol matters: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on connections whose
    # socket says IPPROTO_TCP, and with it on, a small reply written as headers + body waited ~40 ms for the
    # client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        hint = "; stop the other server or choose another --port" if exc.errno == errno.EADDRINUSE else ""
        raise exit_with(f"trompe-server: cannot listen on {host}:{port}: {exc.strerror}{hint}", FAILED) from None
    sock.listen(2048)  # connections queue from now on, so the URL printed next already answers
    return sock


def serve_http(mcp, host: str, port: int, token: str | None, allowed_hosts: list[str], max_body: int,
               limits: Limits, tool_count: int, stateless: bool = False) -> None:
    """Run the server over streamable HTTP with uvicorn until interrupted; stateless when replicas share a registry."""
    import uvicorn

    if not is_loopback(host) and not token:
        raise exit_with(f"refusing to bind {host}: a non-loopback host needs a bearer token "  # a usage error: 2
                        "(--token or TROMPE_TOKEN)")
    security = security_settings(host, port, allowed_hosts)
    if not is_loopback(host) and not allowed_hosts:
        print(f"trompe-server: requests must name one of these hosts: {', '.join(security.allowed_hosts)}; "
              "add --allowed-host NAME:PORT for the name remote clients use", file=sys.stderr)
    # the SDK's own cap only backs up the pool's: sessions being opened are not in the pool until answered
    sdk_app = mcp.streamable_http_app(transport_security=security, max_request_body_size=max_body, host=host,
                                      max_sessions=limits.max_transport_sessions + limits.max_connections,
                                      session_idle_timeout=limits.transport_idle_timeout, stateless_http=stateless)
    pool = SessionPool(sdk_app, mcp.session_manager, limits.max_transport_sessions, limits.transport_unused_timeout,
                       limits.transport_idle_timeout, security.allowed_hosts[0])
    app = BodyLimit(pool, max_body)
    if token:
        app = BearerAuth(app, token)
    logging.getLogger("mcp.server.streamable_http").addFilter(client_went_away)
    protocol = guarded_protocol(connection_cap(limits.max_connections), limits.header_timeout, limits.read_timeout,
                                limits.min_body_rate)
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    print(f"trompe-server: serving {tool_count} tools over streamable HTTP at http://{shown}:{port}/mcp "
          "(Ctrl-C to stop)", file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", http=protocol, timeout_keep_alive=KEEP_ALIVE))

    async def serve() -> None:
        asyncio.get_running_loop().set_exception_handler(AcceptErrors())
        await server.serve(sockets=[sock])

    asyncio.run(serve())
