"""Whose quota a session counts against (app.client_key), on the server assembled as `serve_http` assembles it but
in this process, so a change to app.py shows here (test_quota_identity.py runs the same against a subprocess):
one token holder is one client however it reconnects and whatever the scheme's case; without a token each MCP
transport session, and each connection of the sessionless protocol, is a client of its own."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from imagekit import data_url, gradient
from test_http_hardening import MCP_HEADERS, LegacyClient
from trompe_server.app import ServerConfig, create_app
from trompe_server.http import BearerAuth, BodyLimit, bind, guarded_protocol, security_settings
from trompe_server.limits import Limits

TOKEN = "quota-holder-token"
PER_CLIENT = 2
OPENS = 5
SOURCE = {"source": data_url(gradient())}


@asynccontextmanager
async def served(token: str | None = None):
    """The app behind the same middlewares and protocol as `trompe-server --http`, on a loopback port."""
    limits = Limits(max_sessions=50, max_sessions_per_client=PER_CLIENT)
    app = create_app(ServerConfig(limits=limits))
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    asgi = BodyLimit(app.mcp.streamable_http_app(transport_security=security_settings("127.0.0.1", port, []),
                                                 max_request_body_size=limits.max_source_bytes, host="127.0.0.1",
                                                 max_sessions=limits.max_transport_sessions,
                                                 session_idle_timeout=limits.transport_idle_timeout),
                     limits.max_source_bytes)
    if token:
        asgi = BearerAuth(asgi, token)
    protocol = guarded_protocol(limits.max_connections, limits.header_timeout, limits.read_timeout,
                                limits.min_body_rate)
    server = uvicorn.Server(uvicorn.Config(asgi, log_level="warning", http=protocol))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await task
        sock.close()
        app.registry.close()


def http(scheme: str | None = "Bearer", **headers: str) -> httpx2.AsyncClient:
    """A new HTTP client (its own TCP connections), sending the token under `scheme` unless it is None."""
    sent = {"Authorization": f"{scheme} {TOKEN}"} if scheme else {}
    return httpx2.AsyncClient(headers=sent | headers, timeout=httpx2.Timeout(30, read=120))


async def open_sdk(url: str, scheme: str | None) -> str:
    """One session opened by a fresh SDK client (the sessionless protocol) on a fresh connection."""
    async with http(scheme) as transport, Client(streamable_http_client(url, http_client=transport)) as client:
        result = await client.call_tool("open_session", SOURCE)
        assert not result.is_error, result.content[0].text
        return result.structured_content["session"]


async def open_stateful(url: str, scheme: str | None) -> str:
    """One session opened in a fresh MCP transport session (the stateful protocol) on a fresh connection."""
    async with http(scheme, **MCP_HEADERS) as transport:
        client = await LegacyClient(transport, url).start()
        result = await client.call("open_session", SOURCE)
        assert not result["isError"], result
        return result["structuredContent"]["session"]


async def alive(url: str, sessions: list[str], scheme: str | None) -> list[bool]:
    async with http(scheme) as transport, Client(streamable_http_client(url, http_client=transport)) as check:
        return [not (await check.call_tool("list_images", {"session": s})).is_error for s in sessions]


@pytest.mark.parametrize("opener", [open_sdk, open_stateful], ids=["new-connection", "new-transport-session"])
async def test_one_token_holder_has_one_quota_whatever_the_schemes_case(opener):
    async with served(TOKEN) as url:
        opened = [await opener(url, "Bearer" if n % 2 else "bearer") for n in range(OPENS)]
        assert await alive(url, opened, "Bearer") == [False] * (OPENS - PER_CLIENT) + [True] * PER_CLIENT


@pytest.mark.parametrize("opener", [open_sdk, open_stateful], ids=["new-connection", "new-transport-session"])
async def test_without_a_token_each_connection_or_transport_session_is_a_client(opener):
    async with served() as url:
        opened = [await opener(url, None) for _ in range(OPENS)]
        assert await alive(url, opened, None) == [True] * OPENS


async def test_one_transport_session_has_one_quota_over_many_connections():
    """A stateful client that reconnects for each call (a new TCP connection, the same mcp-session-id) is still
    one client: its third open evicts its first, it does not get a fresh quota per connection."""
    async with served() as url:
        async with http(None, **MCP_HEADERS) as transport:
            session_id = (await LegacyClient(transport, url).start()).session_id
        opened = []
        for _ in range(OPENS):
            async with http(None, **MCP_HEADERS) as transport:
                client = LegacyClient(transport, url)
                client.session_id = session_id
                result = await client.call("open_session", SOURCE)
                assert not result["isError"], result
                opened.append(result["structuredContent"]["session"])
        assert await alive(url, opened, None) == [False] * (OPENS - PER_CLIENT) + [True] * PER_CLIENT


async def test_a_connection_without_a_token_still_has_a_quota():
    """A client of the sessionless protocol on one keep-alive connection is held to max_sessions_per_client like any
    other (only stdio and in-memory servers have the one unlimited local client)."""
    async with served() as url:
        async with http(None) as transport, Client(streamable_http_client(url, http_client=transport)) as client:
            opened = [(await client.call_tool("open_session", SOURCE)).structured_content["session"]
                      for _ in range(OPENS)]
            assert [not (await client.call_tool("list_images", {"session": s})).is_error for s in opened] == \
                [False] * (OPENS - PER_CLIENT) + [True] * PER_CLIENT
