"""MCP transport sessions over HTTP cannot be used up: a flood of bare `initialize` POSTs (255 of them, six
seconds' work, once locked every new client out for 30 minutes) closes the flood's own sessions, never a client's
that works, and never refuses the next client.

No rerun as `nobody`: the pool counts HTTP sessions in one process; no file, process or other user is involved."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from imagekit import data_url, gradient
from serverkit import INITIALIZE
from test_http_hardening import MCP_HEADERS, LegacyClient, Server
from trompe_server.transport_sessions import Held, SessionPool


async def bare_initializes(url: str, count: int, headers: dict[str, str]) -> list[int]:
    """`count` initialize POSTs that are never followed up, 50 at a time; their HTTP statuses."""
    async with httpx2.AsyncClient(headers={**MCP_HEADERS, **headers}, timeout=60,
                                  limits=httpx2.Limits(max_connections=50)) as http:
        statuses: list[int] = []
        for start in range(0, count, 50):
            replies = await asyncio.gather(*(http.post(url, json=INITIALIZE) for _ in range(min(50, count - start))))
            statuses += [r.status_code for r in replies]
        return statuses


async def new_client_works(url: str, headers: dict[str, str]) -> bool:
    """A well-behaved client of the stateful protocol (the official client, `mode="legacy"`) opens a session and
    calls a tool."""
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            opened = await client.call_tool("open_session", {"source": data_url(gradient())})
            return not opened.is_error


async def test_a_thousand_bare_initializes_lock_out_no_client():
    """(A token changes nothing here: BearerAuth is in front of the pool, and anyone holding it floods alike.)"""
    headers: dict[str, str] = {}
    with Server() as server:
        async with httpx2.AsyncClient(headers={**MCP_HEADERS, **headers}, timeout=httpx2.Timeout(30, read=120)) as http:
            patient = await LegacyClient(http, server.url).start()  # connected before the flood, and working
            source = {"source": data_url(gradient())}
            mine = (await patient.call("open_session", source))["structuredContent"]["session"]
            statuses = await bare_initializes(server.url, 1000, headers)
            assert set(statuses) == {200}  # every one admitted: none of them is refused, nor anyone after
            assert await new_client_works(server.url, headers)
            assert not (await patient.call("list_images", {"session": mine}))["isError"]
        assert server.proc.poll() is None


async def test_a_session_never_used_past_initialize_is_closed_after_the_unused_timeout():
    with Server("--transport-unused-timeout", "1") as server:
        async with httpx2.AsyncClient(headers=MCP_HEADERS, timeout=httpx2.Timeout(30, read=120)) as http:
            bare = (await http.post(server.url, json=INITIALIZE)).headers["mcp-session-id"]
            working = await LegacyClient(http, server.url).start()
            await working.call("list_images", {"session": "none"})  # used: kept for --transport-idle-timeout
            await asyncio.sleep(1.5)
            listed = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
            stale = await http.post(server.url, json=listed, headers={"mcp-session-id": bare})
            assert stale.status_code == 404
            assert (await working.call("list_images", {"session": "none"}))["isError"]  # a tool error, not a 404


async def test_beyond_the_cap_the_unused_session_goes_first_and_every_client_is_admitted():
    with Server("--max-transport-sessions", "2") as server:
        async with httpx2.AsyncClient(headers=MCP_HEADERS, timeout=httpx2.Timeout(30, read=120)) as http:
            working = await LegacyClient(http, server.url).start()
            await working.call("list_images", {"session": "none"})
            first = (await http.post(server.url, json=INITIALIZE)).headers["mcp-session-id"]
            second = await http.post(server.url, json=INITIALIZE)  # a third session: the cap is two
            assert second.status_code == 200
            listed = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
            assert (await http.post(server.url, json=listed, headers={"mcp-session-id": first})).status_code == 404
            assert (await working.call("list_images", {"session": "none"}))["isError"]  # still served


def pool(*sessions: tuple[str, Held]) -> SessionPool:
    held = SessionPool(None, None, max_sessions=len(sessions), unused_timeout=30, idle_timeout=1800, host="h")
    held.held = dict(sessions)
    return held


@pytest.mark.parametrize("sessions, victim", [
    # never used past initialize goes before used, however recent
    ([("used", Held("a", 0, 1, used=True)), ("bare", Held("a", 5, 9))], "bare"),
    # among alike, the client holding most loses first
    ([("mine", Held("a", 0, 1)), ("flood1", Held("b", 5, 8)), ("flood2", Held("b", 6, 9))], "flood1"),
    # then the least recently used
    ([("old", Held("a", 0, 1, used=True)), ("new", Held("b", 0, 5, used=True))], "old"),
    # a session with a request in flight only when nothing else is left
    ([("busy", Held("a", 0, 0, busy=1)), ("used", Held("a", 0, 9, used=True))], "used"),
])
def test_the_victim_is_idle_unused_of_the_greediest_client_least_recently_used(sessions, victim):
    assert pool(*sessions)._victim() == victim
