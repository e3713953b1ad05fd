"""Entries under the registry's Redis prefix that trompe-server did not write (another program, or an attacker
with Redis access) give each affected call one clear error, never "failed unexpectedly" or a traceback; nothing
stored is unpickled or executed, and other sessions carry on."""

from __future__ import annotations

import json

import pytest
import redis
from mcp import Client

from imagekit import data_url, gradient
from trompe_server.app import ServerConfig, create_app
from trompe_server.redis_storage import PREFIX
from trompe_server.wire import FAILURE_META

RECORDS = {  # what an entry of a session's records hash is replaced with
    "not json": b"\x80\x04not json at all",
    "a json list": b"[1, 2, 3]",
    "no digest": json.dumps({"operation": "input", "width": 64, "height": 48}).encode(),
    "a digest that is a number": json.dumps({"digest": 7, "width": 64, "height": 48, "mode": "RGB"}).encode(),
    "deeply nested": b"[" * 100000 + b"]" * 100000,
}


@pytest.fixture
async def stored(redis_url, tmp_path):
    """An app on a real Redis with two sessions; yields the app, the victim session and a healthy one."""
    app = create_app(ServerConfig(roots=[tmp_path], registry=redis_url))
    async with Client(app.mcp) as client:
        sessions = []
        for _ in range(2):
            opened = await client.call_tool("open_session", {"source": data_url(gradient())})
            sessions.append(opened.structured_content["session"])
        yield client, redis.Redis.from_url(redis_url), *sessions
    app.registry.close()


def assert_clear(result) -> None:
    text = result.content[0].text
    assert result.is_error and "damaged entry for image 'original'" in text, text
    assert "unexpectedly" not in text and "Traceback" not in text


@pytest.mark.parametrize("raw", list(RECORDS.values()), ids=list(RECORDS))
async def test_a_damaged_record_is_a_clear_error_and_other_sessions_carry_on(stored, raw):
    client, r, victim, healthy = stored
    r.hset(f"{PREFIX}:s:{victim}:records", "original", raw)
    assert_clear(await client.call_tool("crop", {"session": victim, "image": "original", "box": [0, 0, 8, 8]}))
    assert_clear(await client.call_tool("list_images", {"session": victim}))
    fine = await client.call_tool("crop", {"session": healthy, "image": "original", "box": [0, 0, 8, 8]})
    assert not fine.is_error, fine.content[0].text


@pytest.mark.parametrize("pixels", [b"", b"short", b"x" * 10_000_000], ids=["empty", "short", "not deflate"])
async def test_damaged_pixels_are_a_clear_error(stored, pixels):
    client, r, victim, healthy = stored
    record = json.loads(r.hget(f"{PREFIX}:s:{victim}:records", "original"))
    kind = next((k for k in ("png-", "up3-") if record["digest"].startswith(k)), "")  # damaged in its own format
    other = kind + "0" + record["digest"].removeprefix(kind)
    r.hset(f"{PREFIX}:s:{victim}:records", "original", json.dumps(record | {"digest": other}))
    r.set(f"{PREFIX}:px:{other}", pixels)
    assert_clear(await client.call_tool("crop", {"session": victim, "image": "original", "box": [0, 0, 8, 8]}))
    fine = await client.call_tool("crop", {"session": healthy, "image": "original", "box": [0, 0, 8, 8]})
    assert not fine.is_error, fine.content[0].text


@pytest.mark.parametrize("raw, why", [(RECORDS["no digest"], "KeyError: 'digest'"),
                                      (RECORDS["a digest that is a number"], "TypeError: digest is int")])
async def test_a_damaged_entry_is_named_in_full_and_marked_as_the_servers_doing(stored, redis_url, raw, why):
    """The whole line a caller reads, and the failure _meta that tells a client it is not its arguments' fault."""
    client, r, victim, _ = stored
    r.hset(f"{PREFIX}:s:{victim}:records", "original", raw)
    result = await client.call_tool("list_images", {"session": victim})
    assert result.content[0].text == (f"Error executing tool list_images: registry: the shared registry (Redis at "
                                      f"{redis_url}) holds a damaged entry for image 'original' ({why}); only "
                                      "trompe-server should write under its key prefix")
    assert result.meta[FAILURE_META] == "registry"
