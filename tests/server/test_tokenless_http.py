"""HTTP without --token (loopback, single user): slow bodies are cut, local clients have quotas of their own,
and with a token only the exact token passes."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.requests import ClientDisconnect

from imagekit import data_url, gradient
from test_http_hardening import Server, answer, tool_names
from trompe_server.cli import build_parser
from trompe_server.http import BearerAuth, client_went_away

TOKEN = "s3cret-Token_42"


def drip(port: int, replies: list[bytes], stop: threading.Event) -> None:
    """A client that declares a 100-byte body and sends it one byte a second, as long as the server listens."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n{" % port)
    try:
        while not stop.wait(1):
            sock.sendall(b" ")
    except OSError:  # the server closed it: what it sent is read below
        pass
    replies.append(answer(sock))
    sock.close()


async def test_slow_bodies_are_cut_so_they_cannot_hold_every_connection():
    """Eight dripping bodies against an eight-connection server: each is answered 408 within seconds (they
    used to hold for as long as they dripped, the server answering 503 to everyone else), then a real client
    is served."""
    with Server("--max-connections", "8", "--read-timeout", "30") as server:
        replies: list[bytes] = []
        stop = threading.Event()
        drips = [threading.Thread(target=drip, args=(server.port, replies, stop)) for _ in range(8)]
        began = time.monotonic()
        for thread in drips:
            thread.start()
        try:
            with anyio.fail_after(20):
                while len(replies) < 8:
                    await anyio.sleep(0.1)
        finally:
            stop.set()
            for thread in drips:
                thread.join(timeout=30)
        assert time.monotonic() - began < 15
        assert all(r.startswith(b"HTTP/1.1 408") and b"min_body_rate 16384 bytes/s" in r for r in replies), replies
        assert "open_session" in await tool_names(server.url)
        assert not [line for line in server.lines if "Error handling POST request" in line]  # see below


def test_a_client_cut_off_mid_body_is_not_logged_as_a_server_error():
    """Rendered as rich tracebacks, 64 of them at once blocked the event loop for 12 s."""
    def record(exc: BaseException) -> logging.LogRecord:
        return logging.LogRecord("mcp.server.streamable_http", logging.ERROR, __file__, 1, "Error handling POST "
                                 "request", None, (type(exc), exc, None))

    assert not client_went_away(record(ClientDisconnect()))
    assert client_went_away(record(ValueError("a real failure")))


async def test_local_clients_of_the_sessionless_protocol_do_not_share_one_quota():
    """Two SDK clients on 127.0.0.1 without a token: the greedy one's opens evict only its own sessions."""
    with Server("--max-sessions-per-client", "2") as server:
        async with (httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=120)) as one,
                    httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=120)) as other):
            async with (Client(streamable_http_client(server.url, http_client=one)) as victim,
                        Client(streamable_http_client(server.url, http_client=other)) as greedy):
                source = {"source": data_url(gradient())}
                mine = (await victim.call_tool("open_session", source)).structured_content["session"]
                theirs = [(await greedy.call_tool("open_session", source)).structured_content["session"]
                          for _ in range(6)]
                assert not (await victim.call_tool("list_images", {"session": mine})).is_error
                alive = [not (await greedy.call_tool("list_images", {"session": s})).is_error for s in theirs]
                assert alive == [False] * 4 + [True] * 2


async def status_for(authorization: bytes | None) -> int:
    """The status BearerAuth gives a request with this Authorization header (None: no header at all)."""
    async def inner(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    headers = [] if authorization is None else [(b"authorization", authorization)]
    await BearerAuth(inner, TOKEN)({"type": "http", "headers": headers}, None, send)
    return sent[0]["status"]


@pytest.mark.parametrize("authorization, status", [
    (b"Bearer " + TOKEN.encode(), 200),
    (b"bearer " + TOKEN.encode(), 200),  # the scheme is case-insensitive (RFC 7235 section 2.1), the token not
    (None, 401),
    (b"", 401),
    (b"Bearer", 401),
    (b"Bearer ", 401),
    (b"Bearer " + TOKEN[:-1].encode(), 401),  # a prefix
    (b"Bearer " + TOKEN[1:].encode(), 401),  # a suffix
    (b"Bearer " + TOKEN.encode() + b"x", 401),  # the token as a prefix
    (b"Bearer " + TOKEN.upper().encode(), 401),
    (b"Bearer " + TOKEN.lower().encode(), 401),
    (b"Bearer  " + TOKEN.encode(), 401),
    (b"Bearer " + TOKEN.encode() + b" ", 401),
    (TOKEN.encode(), 401),
    (b"Basic " + TOKEN.encode(), 401),
    (b"Bearer" + TOKEN.encode(), 401),
])
async def test_only_the_exact_token_passes(authorization, status):
    assert await status_for(authorization) == status


@given(token=st.binary(max_size=40).filter(lambda t: t != TOKEN.encode()))
def test_any_other_token_is_refused(token):
    assert anyio.run(status_for, b"Bearer " + token) == 401


def test_tokenless_http_is_documented_as_single_user_loopback():
    assert "Without one, HTTP is for a single user on loopback" in " ".join(build_parser().format_help().split())
    assert '!!! warning "HTTP without `--token` is for one user on loopback"' in (
        Path(__file__).parents[2] / "docs" / "server.md").read_text()
