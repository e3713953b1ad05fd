"""The HTTP transport's guards in this process (the subprocess tests cannot see a change to http.py under mutation):
which hosts count as loopback and may be addressed, the body cap's and the token's refusals as a client reads
them, and uvicorn with the guarded protocol on a real socket: the connection cap, the header deadline counted
from the first byte, the stalled-body deadline and the minimum body rate."""

from __future__ import annotations

import asyncio
import errno
import json
import resource
import socket
import time
from contextlib import asynccontextmanager

import pytest
import uvicorn

from trompe_kernel.exits import FAILED, USAGE
from trompe_server import http
from trompe_server.http import (AcceptErrors, BearerAuth, BodyLimit, bind, connection_cap, guarded_protocol,
                                is_loopback, security_settings, serve_http)
from trompe_server.limits import Limits


@pytest.mark.parametrize("host, loopback", [
    ("localhost", True), ("127.0.0.1", True), ("::1", True), ("127.8.9.1", True), ("0.0.0.0", False),
    ("10.0.0.1", False), ("::", False), ("example.com", False), ("", False), ("localhost.example.com", False),
])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def test_only_the_bound_host_and_the_named_extras_may_be_addressed():
    settings = security_settings("10.1.2.3", 8765, ["mcp.example.com", "proxy:443"])
    assert settings.enable_dns_rebinding_protection
    assert settings.allowed_hosts == sorted(["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "10.1.2.3:8765",
                                             "mcp.example.com:8765", "proxy:443"])
    assert settings.allowed_origins == [f"http://{h}" for h in settings.allowed_hosts]


async def inner(scope, receive, send):
    """The app behind a middleware: 200, the request's path as a header and its body echoed."""
    body = (await receive())["body"]
    await send({"type": "http.response.start", "status": 200, "headers": [(b"x-path", scope["path"].encode())]})
    await send({"type": "http.response.body", "body": body})


async def answer(middleware, headers: list[tuple[bytes, bytes]], kind: str = "http") -> list[dict]:
    """What the middleware sends for a request to /mcp with these headers and the body b"hi"."""
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"hi", "more_body": False}

    async def send(message):
        sent.append(message)

    await middleware({"type": kind, "path": "/mcp", "headers": headers}, receive, send)
    if sent[0]["status"] == 200:  # passed through: the app behind got the same scope and receive
        assert sent == [{"type": "http.response.start", "status": 200, "headers": [(b"x-path", b"/mcp")]},
                        {"type": "http.response.body", "body": b"hi"}]
    return sent


def refusal(sent: list[dict]) -> tuple[int, dict[bytes, bytes], dict]:
    """The status, headers and JSON-RPC body of a refusal, sent as the two ASGI messages of a response."""
    start, body = sent
    assert (start["type"], body["type"]) == ("http.response.start", "http.response.body")
    return start["status"], dict(start["headers"]), json.loads(body["body"])


@pytest.mark.parametrize("declared, status", [
    (None, 200), (b"1000", 200), (b"1001", 413), (b"99999999999", 413), (b"abc", 200), (b"-5", 200),
])
async def test_a_body_declared_over_the_cap_is_refused_naming_the_limit(declared, status):
    headers = [] if declared is None else [(b"content-length", declared)]
    sent = await answer(BodyLimit(inner, 1000), headers)
    assert sent[0]["status"] == status
    if status == 413:
        code, headers, body = refusal(sent)
        assert headers == {b"content-type": b"application/json"}
        assert body == {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": (
            f"request body: {int(declared)} bytes, over this server's 1000-byte limit; images travel as base64 "
            "(4/3 of the file size): send a smaller image or start the server with a larger --max-source-bytes")}}


async def test_a_wrong_token_is_told_how_to_send_the_right_one():
    code, headers, body = refusal(await answer(BearerAuth(inner, "tok"), [(b"authorization", b"Bearer nope")]))
    assert code == 401
    assert headers == {b"content-type": b"application/json", b"www-authenticate": b'Bearer realm="trompe"'}
    assert body["error"] == {"code": -32001, "message": http.UNAUTHORIZED}


@pytest.mark.parametrize("authorization, status", [
    (b"Bearer two words", 200), (b"Bearer two  words", 401), (b"Bearer two", 401), (b"Bearer words", 401),
])
async def test_a_token_with_a_space_is_compared_whole(authorization, status):
    """Only the first space ends the scheme: the rest of the header, spaces included, is the token."""
    sent = await answer(BearerAuth(inner, "two words"), [(b"authorization", authorization)])
    assert sent[0]["status"] == status


@pytest.mark.parametrize("middleware", [BearerAuth(inner, "tok"), BodyLimit(inner, 1)])
async def test_the_guards_leave_other_asgi_events_alone(middleware):
    """Lifespan events carry no headers: the app behind must still receive them."""
    assert (await answer(middleware, [(b"content-length", b"5")], kind="lifespan"))[0]["status"] == 200


def test_the_connection_cap_fits_the_descriptor_limit(capsys):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    usable = soft - http.FD_RESERVE
    assert connection_cap(usable) == usable and capsys.readouterr().err == ""
    assert connection_cap(usable + 10) == usable
    assert capsys.readouterr().err == (f"trompe-server: max_connections lowered from {usable + 10} to {usable} to "
                                       f"fit the descriptor limit ({soft}, ulimit -n)\n")
    resource.setrlimit(resource.RLIMIT_NOFILE, (http.FD_RESERVE + 1, hard))
    try:
        assert connection_cap(5) == 1
        resource.setrlimit(resource.RLIMIT_NOFILE, (http.FD_RESERVE, hard))
        with pytest.raises(SystemExit) as refused:
            connection_cap(5)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert str(refused.value) == (f"trompe-server: only {http.FD_RESERVE} file descriptors allowed (ulimit -n); "
                                  f"HTTP needs more than {http.FD_RESERVE}: raise it with ulimit -n 4096")
    assert refused.value.code == USAGE  # a setting to change before it can run (exits.py), not a failure while working


def test_running_out_of_descriptors_is_said_once_a_second_and_other_errors_go_to_asyncio(capsys):
    handler = AcceptErrors()
    for code in (errno.EMFILE, errno.ENOBUFS, errno.ENOMEM):
        handler(None, {"exception": OSError(code, "Too many open files")})
    assert capsys.readouterr().err == ("trompe-server: refusing connections for now: Too many open files (lower "
                                       "--max-connections or raise ulimit -n)\n")
    time.sleep(1.2)  # a second later it is said again
    handler(None, {"exception": OSError(errno.EMFILE, "Too many open files")})
    assert capsys.readouterr().err.count("refusing connections for now") == 1
    handed: list[dict] = []
    loop = type("Loop", (), {"default_exception_handler": lambda self, context: handed.append(context)})()
    other = {"exception": OSError(errno.ECONNRESET, "reset")}
    handler(loop, other)
    handler(loop, {"message": "no exception"})
    assert handed == [other, {"message": "no exception"}] and capsys.readouterr().err == ""


def test_a_busy_port_is_one_line_and_ipv6_hosts_bind():
    first = bind("127.0.0.1", 0)
    port = first.getsockname()[1]
    try:
        with pytest.raises(SystemExit) as refused:
            bind("127.0.0.1", port)
    finally:
        first.close()
    assert str(refused.value) == (f"trompe-server: cannot listen on 127.0.0.1:{port}: Address already in use; "
                                  "stop the other server or choose another --port")
    assert refused.value.code == FAILED  # exits.py: the port is taken
    six = bind("::1", 0)
    try:
        assert six.family == socket.AF_INET6 and six.proto == socket.IPPROTO_TCP
    finally:
        six.close()


def test_an_address_not_on_this_host_is_one_line_without_the_busy_port_hint():
    with pytest.raises(SystemExit) as refused:
        bind("192.0.2.1", 0)  # TEST-NET-1 (RFC 5737): no interface of this host has it
    assert str(refused.value) == "trompe-server: cannot listen on 192.0.2.1:0: Cannot assign requested address"


def test_a_host_beyond_loopback_is_refused_without_a_token():
    with pytest.raises(SystemExit) as refused:
        serve_http(None, "0.0.0.0", 1, None, [], 1000, Limits(), 0)
    assert refused.value.code == 2 and str(refused.value) == ("refusing to bind 0.0.0.0: a non-loopback host needs "
                                                              "a bearer token (--token or TROMPE_TOKEN)")


async def echo(scope, receive, send):
    """Reads the whole body and answers its length."""
    if scope["type"] != "http":
        return
    size, more = 0, True
    while more:
        message = await receive()
        size += len(message.get("body", b""))
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(
        str(size)))]})
    await send({"type": "http.response.body", "body": str(size).encode()})


@asynccontextmanager
async def guarded(max_connections=8, header_timeout=0.5, read_timeout=0.5, min_body_rate=1000):
    """uvicorn in this process with the guarded protocol, on a socket bound as serve_http binds it."""
    sock = bind("127.0.0.1", 0)
    protocol = guarded_protocol(max_connections, header_timeout, read_timeout, min_body_rate)
    server = uvicorn.Server(uvicorn.Config(echo, log_level="warning", http=protocol, lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task
        sock.close()


async def read_all(reader: asyncio.StreamReader, timeout: float = 5) -> bytes:
    return await asyncio.wait_for(reader.read(), timeout)


def raw_reply(status: str, message: str) -> bytes:
    """The whole response the guard writes before h11 has seen a request."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}).encode()
    return (b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
            % (status.encode(), len(body))) + body


def timed_out(header_timeout, read_timeout, min_body_rate) -> bytes:
    return raw_reply("408 Request Timeout", f"request not received in time (header_timeout {header_timeout:g} s, "
                     f"read_timeout {read_timeout:g} s, min_body_rate {min_body_rate} bytes/s)")


REQUEST = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n"


async def test_a_request_in_time_is_served_and_the_connection_kept_for_the_next():
    async with guarded() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(2):
            writer.write(REQUEST % 5 + b"hello")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            assert head.startswith(b"HTTP/1.1 200") and await reader.readexactly(1) == b"5"
            await asyncio.sleep(0.3)  # idle between requests, under the header timeout
        writer.close()


async def drip(port: int, head: bytes, byte: bytes | None, seconds: float = 4) -> tuple[bytes, float]:
    """Send `head`, then `byte` (or, with None, the head itself one byte at a time) every 0.05 s until the server
    answers; returns what it sent and the seconds from the first byte."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    began = time.monotonic()
    replied = asyncio.create_task(reader.read(65536))
    chunks = [bytes([b]) for b in head] if byte is None else [head]
    while not replied.done() and time.monotonic() - began < seconds:
        writer.write(chunks.pop(0) if chunks else (byte or b""))
        await asyncio.wait([replied], timeout=0.05)
    reply = await asyncio.wait_for(replied, 5)
    elapsed = time.monotonic() - began
    reply += await read_all(reader)
    writer.close()
    return reply, elapsed


async def test_headers_sent_byte_by_byte_time_out_from_the_first_byte():
    """The deadline is not reset per byte: a client dripping its headers is cut header_timeout after it began."""
    async with guarded(header_timeout=0.6, read_timeout=5) as port:
        reply, elapsed = await drip(port, b"POST /mcp HTTP/1.1\r\nX-Padding: " + b"p" * 100, None)
    assert reply == timed_out(0.6, 5, 1000)
    assert 0.5 < elapsed < 2.5, elapsed  # reset per byte, it would come only once the 4 s of dripping stop


async def test_bytes_arriving_as_the_408_is_sent_do_not_turn_it_into_a_reset():
    """A byte lands in the server's socket in the same loop turn as the timeout (what a loaded box does by
    chance): closing with it unread sent a reset, and the client lost the 408."""
    loop = asyncio.get_running_loop()
    async with guarded(header_timeout=5, read_timeout=0.3) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(REQUEST % 100 + b"{")
        await asyncio.sleep(0.1)  # the server has read it and armed its 0.3-s deadline
        loop.call_soon(time.sleep, 0.4)  # the loop stalls, so the next turn runs both of these in order:
        loop.call_later(0.15, writer.write, b" ")  # the client's byte reaches the server's socket, unread
        reply = await read_all(reader)
        writer.close()
    assert reply == timed_out(5, 0.3, 1000)


async def test_a_body_that_stalls_times_out_after_read_timeout():
    async with guarded(header_timeout=5, read_timeout=0.4) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(REQUEST % 100 + b"{")
        began = time.monotonic()
        reply = await read_all(reader)
        elapsed = time.monotonic() - began
        writer.close()
    assert reply == timed_out(5, 0.4, 1000)
    assert 0.3 < elapsed < 1.5, elapsed


async def test_a_body_slower_than_the_minimum_rate_is_cut_after_the_grace():
    """A byte every 0.05 s against 1000 bytes/s: it falls behind once the 2-second grace is spent."""
    async with guarded(header_timeout=5, read_timeout=5, min_body_rate=1000) as port:
        reply, elapsed = await drip(port, REQUEST % 10_000, b" ")
    assert reply == timed_out(5, 5, 1000)
    assert http.BODY_GRACE - 0.1 < elapsed < http.BODY_GRACE + 1, elapsed


async def test_bodies_faster_than_the_minimum_rate_are_served_one_after_another_on_a_connection():
    """Three times the minimum rate for 3 s, in 300-byte chunks, twice on one kept-alive connection (the second
    request's headers in two parts): the rate counts every byte of the body, not the last chunk, and each
    request is measured afresh."""
    async with guarded(header_timeout=5, read_timeout=5, min_body_rate=1000) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(2):
            head = REQUEST % 9000
            writer.write(head[:20])
            await asyncio.sleep(0.1)
            writer.write(head[20:])
            for _ in range(30):
                writer.write(b"x" * 300)
                await asyncio.sleep(0.1)
            reply = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            assert reply.startswith(b"HTTP/1.1 200"), reply
            assert await reader.readexactly(4) == b"9000"
        writer.close()


async def test_connections_over_the_cap_are_told_the_server_is_busy():
    async with guarded(max_connections=1, header_timeout=5) as port:
        _, holding = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.sleep(0.05)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        reply = await read_all(reader)
        writer.close()
        holding.close()
    assert reply == raw_reply("503 Service Unavailable", "server busy: 1 connections are open (max_connections); "
                              "retry shortly")
