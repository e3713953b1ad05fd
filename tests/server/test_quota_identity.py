"""Whose quota a session counts against: one token holder is one client, however it reconnects.

With `--token`, every holder of the token is one client (app.client_key): neither a fresh TCP connection (the
sessionless protocol the SDK client speaks) nor a fresh MCP transport session (the stateful 2025-06-18
protocol) may buy a fresh `--max-sessions-per-client`. Without a token each transport session or connection
is a client of its own, never the address alone (test_tokenless_http.py, test_http_hardening.py).
"""

from __future__ import annotations

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from imagekit import data_url, gradient
from test_http_hardening import MCP_HEADERS, LegacyClient, Server

TOKEN = "quota-holder-token"
PER_CLIENT = 2
OPENS = 5
SOURCE = {"source": data_url(gradient())}


def http(**headers: str) -> httpx2.AsyncClient:
    """A new HTTP client: its own TCP connections; it sends the token."""
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}", **headers},
                              timeout=httpx2.Timeout(30, read=120))


async def open_sdk(url: str) -> str:
    """One session opened by a fresh SDK client (sessionless protocol) on a fresh connection."""
    async with http() as transport, Client(streamable_http_client(url, http_client=transport)) as client:
        result = await client.call_tool("open_session", SOURCE)
        assert not result.is_error, result.content[0].text
        return result.structured_content["session"]


async def open_stateful(url: str) -> str:
    """One session opened in a fresh MCP transport session (stateful protocol) on a fresh connection."""
    async with http(**MCP_HEADERS) as transport:
        client = await LegacyClient(transport, url).start()
        result = await client.call("open_session", SOURCE)
        assert not result["isError"], result
        return result["structuredContent"]["session"]


@pytest.mark.parametrize("opener", [open_sdk, open_stateful], ids=["new-connection", "new-transport-session"])
async def test_one_token_holder_has_one_quota_however_it_reconnects(opener):
    with Server("--token", TOKEN, "--max-sessions-per-client", str(PER_CLIENT), "--max-sessions", "50") as server:
        opened = [await opener(server.url) for _ in range(OPENS)]
        async with http() as transport, Client(streamable_http_client(server.url, http_client=transport)) as check:
            alive = [not (await check.call_tool("list_images", {"session": s})).is_error for s in opened]
    assert alive == [False] * (OPENS - PER_CLIENT) + [True] * PER_CLIENT, "each reconnection got a fresh quota"
