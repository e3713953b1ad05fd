"""The registry's rules hold the same on a real Redis as in memory, through the official MCP client."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from PIL import Image

from trompe_server.app import ServerConfig, create_app
from trompe_server.errors import ToolInputError
from trompe_server.limits import Limits
from trompe_server.memory_storage import MemoryStorage
from trompe_server.redis_storage import RedisStorage
from trompe_server.registry import Registry

from imagekit import data_url, gradient, result_image
from serverkit import same_pixels


@pytest.fixture
def make_shared_app(storage, tmp_path):
    """Build a server app on each storage in turn, so one test checks them all."""
    apps = []

    def factory(limits: Limits | None = None):
        app = create_app(ServerConfig(limits=limits or Limits(), roots=[tmp_path], registry=storage.url))
        apps.append(app)
        return app

    yield factory
    for app in apps:
        app.registry.close()


async def open_with(client, im=None) -> str:
    result = await client.call_tool("open_session", {"source": data_url(im or gradient())})
    assert not result.is_error, result.content[0].text
    return result.structured_content["session"]


async def crop(client, session, box=(0, 0, 32, 24)):
    return await client.call_tool("crop", {"session": session, "image": "original", "box": list(box)})


async def test_lineage_and_pixels_round_trip(make_shared_app):
    async with Client(make_shared_app().mcp) as client:
        session = await open_with(client)
        first = await crop(client, session, (8, 8, 40, 24))
        assert first.structured_content["image"] == "img_001"
        second = await client.call_tool("crop", {"session": session, "image": "img_001", "box": [0, 0, 16, 8]})
        assert second.structured_content["parents"] == ["img_001"]
        view = await client.call_tool("view_image", {"session": session, "image": "img_002"})
        assert same_pixels(result_image(view), gradient().crop((8, 8, 40, 24)).crop((0, 0, 16, 8)))
        images = (await client.call_tool("list_images", {"session": session})).structured_content["images"]
        assert [(i["id"], i["operation"], i["parents"]) for i in images] == [
            ("original", "input", []), ("img_001", "crop", ["original"]), ("img_002", "crop", ["img_001"])]
        assert images[1]["arguments"]["box"] == [8, 8, 40, 24]


async def test_limits_refuse_and_leave_the_session_unchanged(make_shared_app):
    one = 32 * 24 * 3
    app = make_shared_app(Limits(max_images=3, max_session_bytes=64 * 48 * 3 + 2 * one))
    async with Client(app.mcp) as client:
        session = await open_with(client)
        assert not (await crop(client, session)).is_error
        big = await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 64, 30]})
        assert big.is_error and "max_session_bytes" in big.content[0].text
        assert not (await crop(client, session)).is_error
        full = await crop(client, session)
        assert full.is_error and "already holds 3 images (max_images)" in full.content[0].text
        again = await client.call_tool("add_image", {"session": session, "source": data_url(gradient()),
                                                     "name": "original"})
        assert again.is_error and "'original' already exists" in again.content[0].text
        images = (await client.call_tool("list_images", {"session": session})).structured_content["images"]
        assert [i["id"] for i in images] == ["original", "img_001", "img_002"]  # gapless after refusals


async def test_least_recently_used_session_is_evicted(make_shared_app):
    async with Client(make_shared_app(Limits(max_sessions=2)).mcp) as client:
        first, second = await open_with(client), await open_with(client)
        await crop(client, first)  # first is now the more recently used
        await open_with(client)
        assert not (await crop(client, first)).is_error
        gone = await crop(client, second)
        assert gone.is_error and "the server holds at most 2 sessions (max_sessions); raise it on the server " \
            "(--max-sessions or TROMPE_MAX_SESSIONS)" in gone.content[0].text


async def test_idle_sessions_expire(make_shared_app):
    async with Client(make_shared_app(Limits(idle_timeout=0.2)).mcp) as client:
        session = await open_with(client)
        await anyio.sleep(0.4)
        result = await client.call_tool("list_images", {"session": session})
        assert result.is_error and "idle for 0.2 s are dropped" in result.content[0].text


def test_equal_pixels_are_stored_once_and_freed_with_the_last_session(redis_url):
    registry = Registry(Limits(), RedisStorage(redis_url, Limits().memory_budget))
    client = registry.storage.client
    try:
        sessions = [registry.create_session() for _ in range(2)]
        for session in sessions:
            registry.add_input(session, "original", gradient(), "test")
        blobs = client.keys("trompe:px:*")
        assert len(blobs) == 1
        assert 0 < client.ttl(blobs[0]) <= 3600 * 1.25 + 1  # tied to the sessions' idle expiry
        registry.close_session(sessions[0])
        assert client.exists(blobs[0])
        registry.close_session(sessions[1])
        assert client.keys("trompe:*") == client.keys("trompe:nonce:*")  # retry guards expire on their own
    finally:
        registry.close()


def test_local_cache_stays_within_the_memory_budget(redis_url):
    one = 64 * 48 * 3
    registry = Registry(Limits(), RedisStorage(redis_url, memory_budget=2 * one))
    try:
        session = registry.create_session()
        for i in range(6):
            registry.add_input(session, f"image_{i}", gradient().rotate(i * 60), "test")
            assert registry.bytes_in_memory <= 2 * one
        assert same_pixels(registry.load(session, "image_0"), gradient().rotate(0))  # fetched back from Redis
    finally:
        registry.close()


def test_pixels_a_replica_holds_are_read_from_its_memory_not_from_redis(redis_server, redis_url):
    """The cache spares a tool call a Redis round trip and a decompression: a read of cached pixels sends no GET."""
    registry = Registry(Limits(), RedisStorage(redis_url, memory_budget=10 * 64 * 48 * 3))
    try:
        session = registry.create_session()
        registry.add_input(session, "image_2", gradient(), "test")
        with redis_server.client() as client:
            client.config_resetstat()
            assert same_pixels(registry.load(session, "image_2"), gradient())
            assert "cmdstat_get" not in client.info("commandstats")
            registry.storage.cache.clear()  # the same read without it goes to Redis
            assert same_pixels(registry.load(session, "image_2"), gradient())
            assert client.info("commandstats")["cmdstat_get"]["calls"] == 1
    finally:
        registry.close()


OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("input"), st.sampled_from(["original", "image_2", "img_001", "bad name"])),
    st.tuples(st.just("output"), st.integers(1, 40), st.integers(1, 30)),
    st.tuples(st.just("read"), st.sampled_from(["original", "img_001", "img_002", "image_2"])),
), max_size=12)


def replay(registry: Registry, operations) -> list[str]:
    """What a caller would see for each step: the id made or read, or the error text."""
    session = registry.create_session()
    seen = []
    for op in operations:
        try:
            if op[0] == "input":
                seen.append(registry.add_input(session, op[1], gradient(), "test").id)
            elif op[0] == "output":
                seen.append(registry.add_output(session, Image.new("RGB", op[1:]), "make", {}, ()).id)
            else:
                seen.append(registry.load(session, op[1]).size)
        except ToolInputError as exc:
            seen.append(str(exc).replace(session, "S"))
    seen.append([r.describe() | {"created": 0} for r in registry.records(session)])
    return seen


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS)
def test_both_storages_answer_every_sequence_alike(redis_url, operations):
    limits = Limits(max_images=4, max_session_bytes=64 * 48 * 3 + 2000)
    memory = Registry(limits, MemoryStorage(limits.memory_budget))
    shared = Registry(limits, RedisStorage(redis_url, limits.memory_budget))
    try:
        assert replay(shared, operations) == replay(memory, operations)
    finally:
        memory.close()
        shared.close()
