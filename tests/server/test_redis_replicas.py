"""Two `trompe-server --http` replicas on one real Redis, driven with the official MCP client."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from imagekit import data_url, gradient, result_image
from rediskit import RedisServer, start_replica
from serverkit import SERVER, env_with, free_port, same_pixels, stop


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def replicas(redis_server, tmp_path):
    """Start replicas on demand (with extra flags); all are stopped at the end."""
    procs = []

    def start(*flags: str) -> list[str]:
        urls = []
        for _ in range(2):
            proc, url = start_replica(redis_server.url, tmp_path, *flags)
            procs.append(proc)
            urls.append(url)
        return urls

    start.procs = procs
    yield start
    for proc in procs:
        stop(proc)


@contextlib.asynccontextmanager
async def connect(url: str):
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


async def open_with(client) -> str:
    result = await client.call_tool("open_session", {"source": data_url(gradient())})
    assert not result.is_error, result.content[0].text
    return result.structured_content["session"]


def crop(client, session, i: int):
    return client.call_tool("crop", {"session": session, "image": "original", "box": [i, 0, i + 16, 16]})


async def image_ids(client, session) -> list[str]:
    result = await client.call_tool("list_images", {"session": session})
    assert not result.is_error, result.content[0].text
    return [i["id"] for i in result.structured_content["images"]]


async def test_a_session_opened_on_one_replica_is_used_on_the_other_with_gapless_ids(replicas):
    a_url, b_url = replicas()
    async with connect(a_url) as a, connect(b_url) as b:
        session = await open_with(a)
        results = await asyncio.gather(*(crop(a if i % 2 else b, session, i) for i in range(16)))
        assert all(not r.is_error for r in results), [r.content[0].text for r in results if r.is_error]
        made = sorted(r.structured_content["image"] for r in results)
        assert made == [f"img_{n:03d}" for n in range(1, 17)]
        for result in results:  # every id names the pixels of the call that got it
            box = next(i["arguments"]["box"] for i in (await b.call_tool("list_images", {"session": session}))
                       .structured_content["images"] if i["id"] == result.structured_content["image"])
            assert same_pixels(result_image(result), gradient().crop(tuple(box)))
        assert await image_ids(a, session) == ["original", *made]


async def test_limits_hold_across_replicas(replicas):
    a_url, b_url = replicas("--max-images", "5", "--max-sessions", "2")
    async with connect(a_url) as a, connect(b_url) as b:
        session = await open_with(a)
        results = await asyncio.gather(*(crop(a if i % 2 else b, session, i) for i in range(10)))
        refused = [r.content[0].text for r in results if r.is_error]
        assert len(refused) == 6 and all("(max_images)" in text for text in refused)
        assert await image_ids(b, session) == ["original", "img_001", "img_002", "img_003", "img_004"]
        await open_with(b)
        await open_with(a)  # a third live session: the least recently used one (the first) is evicted
        gone = await b.call_tool("list_images", {"session": session})
        assert gone.is_error and "unknown, closed or expired session" in gone.content[0].text


async def test_a_replica_killed_mid_call_loses_nothing_acknowledged(replicas):
    a_url, b_url = replicas()
    opened, acknowledged = [], {}

    async def drive_a() -> None:
        async with connect(a_url) as a:
            opened.append(await open_with(a))

            async def one(i: int) -> None:
                result = await crop(a, opened[0], i)
                if not result.is_error:
                    acknowledged[result.structured_content["image"]] = result_image(result)
                    replicas.procs[0].kill()  # SIGKILL at the first acknowledgement, the others in flight

            await asyncio.gather(*(one(i) for i in range(12)))

    with contextlib.suppress(Exception, BaseExceptionGroup):  # the dead replica's calls fail on the client
        await drive_a()
    assert acknowledged
    async with connect(b_url) as b:
        stored = await image_ids(b, opened[0])
        assert stored == ["original", *(f"img_{n:03d}" for n in range(1, len(stored)))]  # gapless
        assert set(acknowledged) <= set(stored)
        for image_id, pixels in acknowledged.items():
            view = await b.call_tool("view_image", {"session": opened[0], "image": image_id})
            assert same_pixels(result_image(view), pixels)


async def test_redis_restart_keeps_sessions_and_an_outage_is_a_clear_error(replicas, redis_server):
    a_url, b_url = replicas()
    async with connect(a_url) as a, connect(b_url) as b:
        session = await open_with(a)
        assert not (await crop(a, session, 0)).is_error
        redis_server.stop()
        down = await crop(b, session, 1)
        assert down.is_error and "the shared registry (Redis at redis://127.0.0.1" in down.content[0].text
        assert "is unreachable" in down.content[0].text
        redis_server.start()  # same port and append-only file
        assert not (await crop(b, session, 2)).is_error
        assert await image_ids(a, session) == ["original", "img_001", "img_002"]


def test_start_without_redis_is_a_one_line_error(tmp_path):
    url = f"redis://127.0.0.1:{free_port()}/0"
    done = subprocess.run([SERVER, "--http", "--port", str(free_port()), "--registry", url], env=env_with(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith(f"trompe-server: --registry {url}: cannot reach Redis")
