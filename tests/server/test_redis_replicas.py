"""Two `trompe-server --http` replicas on one real Redis, driven with the official MCP client."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import threading
from collections import Counter

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from imagekit import data_url, gradient, result_image
from rediskit import start_replicas
from serverkit import SERVER, env_with, free_port, same_pixels, stop


@pytest.fixture
def replica_servers(own_redis, tmp_path):
    """Start replicas on demand (with extra flags); all are stopped at the end."""
    procs = []

    def start(*flags: str) -> list[str]:
        started = start_replicas(own_redis.url, tmp_path, 2, *flags)
        procs.extend(proc for proc, _ in started)
        return [url for _, url in started]

    start.procs = procs
    yield start
    for proc in procs:
        stop(proc)


@contextlib.asynccontextmanager
async def connect(url: str, token: str | None = None):
    """The official MCP client; a bearer `token` makes the caller a client of its own for the quotas."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
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


async def test_a_session_opened_on_one_replica_is_used_on_the_other_with_gapless_ids(replica_servers):
    a_url, b_url = replica_servers()
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


async def test_limits_hold_across_replicas(replica_servers):
    a_url, b_url = replica_servers("--max-images", "5", "--max-sessions", "2")
    async with connect(a_url) as a, connect(b_url) as b:
        session = await open_with(a)
        results = await asyncio.gather(*(crop(a if i % 2 else b, session, i) for i in range(10)))
        refused = [r.content[0].text for r in results if r.is_error]
        assert len(refused) == 6 and all("(max_images)" in text for text in refused)
        assert await image_ids(b, session) == ["original", "img_001", "img_002", "img_003", "img_004"]
        await open_with(b)
        await open_with(a)  # a third live session: the least recently used one (the first) is evicted
        gone = await b.call_tool("list_images", {"session": session})
        assert gone.is_error and "the server holds at most 2 sessions (max_sessions)" in gone.content[0].text


async def still_open(clients, sessions) -> list[str]:
    """The sessions list_images still answers for, asking the clients in turn (so each replica is asked)."""
    answers = [await clients[i % len(clients)].call_tool("list_images", {"session": s})
               for i, s in enumerate(sessions)]
    for session, answer in zip(sessions, answers):  # the one error allowed: evicted by the client's quota
        assert not answer.is_error or f"session {session!r} was evicted to make room for newer ones: its client " \
            "(bearer token, else connection) may hold at most" in answer.content[0].text
    return [s for s, answer in zip(sessions, answers) if not answer.is_error]


def holders(own_redis) -> list[int]:
    """How many live sessions each client holds, as Redis records them, fewest first."""
    with own_redis.client() as db:
        assert db.hlen("trompe:owners") == db.zcard("trompe:sessions")  # every live session has its owner
        return sorted(Counter(db.hvals("trompe:owners")).values())


async def test_a_clients_quota_is_one_across_replicas(replica_servers, own_redis):
    a_url, b_url = replica_servers("--max-sessions-per-client", "3")
    async with connect(a_url, "alice") as on_a, connect(b_url, "alice") as on_b, connect(b_url, "bob") as bob:
        bobs = [await open_with(bob) for _ in range(2)]
        first, second, third = [await open_with(on_a) for _ in range(3)]
        assert not (await crop(on_b, first, 0)).is_error  # now `second` is alice's least recently used
        fourth = await open_with(on_b)  # one over her quota, through the other replica
        for client in (on_a, on_b):
            assert await still_open([client], [first, second, third, fourth]) == [first, third, fourth]
        assert await image_ids(on_a, first) == ["original", "img_001"]
        assert await still_open([bob], bobs) == bobs  # another client is unaffected
        assert holders(own_redis) == [2, 3]


async def test_concurrent_opens_through_both_replicas_never_exceed_the_quota(replica_servers, own_redis):
    quota = 3
    # 24 opens at once from one starved client process are slow clients by the slow-request guard's measure on
    # a loaded box (a 408 at load 22); the guard has tests of its own, this one is about the quota
    patient = ["--header-timeout", "300", "--read-timeout", "300", "--min-body-rate", "1"]
    a_url, b_url = replica_servers("--max-sessions-per-client", str(quota), *patient)
    finished, counts = threading.Event(), []

    def watch() -> None:  # live sessions as Redis holds them, read over and over while the opens run
        with own_redis.client() as db:
            while True:
                counts.append(db.zcard("trompe:sessions"))
                if finished.wait(0.001):  # a breath between reads, so the clients' loop in this process runs
                    counts.append(db.zcard("trompe:sessions"))  # and once every open has returned
                    return

    async with connect(a_url, "alice") as on_a, connect(b_url, "alice") as on_b, connect(a_url, "bob") as bob:
        bobs = await open_with(bob)
        source = {"source": data_url(gradient())}
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            results = await asyncio.gather(*((on_a if i % 2 else on_b).call_tool("open_session", source)
                                             for i in range(24)))
        finally:
            finished.set()
            watcher.join()
        assert counts and max(counts) <= quota + 1 and counts[-1] == quota + 1
        opened = [r.structured_content["session"] for r in results if not r.is_error]
        for refused in (r.content[0].text for r in results if r.is_error):  # evicted by the others at once
            assert "the new session was evicted before its first image was stored" in refused
        assert len(await still_open([on_a, on_b], opened)) == quota
        assert await still_open([bob], [bobs]) == [bobs]
        assert holders(own_redis) == [1, quota]


async def test_a_replica_killed_mid_call_loses_nothing_acknowledged(replica_servers):
    a_url, b_url = replica_servers()
    opened, acknowledged = [], {}

    async def drive_a() -> None:
        async with connect(a_url) as a:
            opened.append(await open_with(a))

            async def one(i: int) -> None:
                result = await crop(a, opened[0], i)
                if not result.is_error:
                    acknowledged[result.structured_content["image"]] = result_image(result)
                    replica_servers.procs[0].kill()  # SIGKILL at the first acknowledgement, the others in flight

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


async def test_redis_restart_keeps_sessions_and_an_outage_is_a_clear_error(replica_servers, own_redis):
    a_url, b_url = replica_servers()
    async with connect(a_url) as a, connect(b_url) as b:
        session = await open_with(a)
        assert not (await crop(a, session, 0)).is_error
        own_redis.stop()
        down = await crop(b, session, 1)
        assert down.is_error and "the shared registry (Redis at redis://127.0.0.1" in down.content[0].text
        assert "is unreachable" in down.content[0].text
        own_redis.start()  # same port and append-only file
        assert not (await crop(b, session, 2)).is_error
        assert await image_ids(a, session) == ["original", "img_001", "img_002"]


def test_start_without_redis_is_a_one_line_error(tmp_path):
    url = f"redis://127.0.0.1:{free_port()}/0"
    done = subprocess.run([SERVER, "--http", "--port", str(free_port()), "--registry", url], env=env_with(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith(f"trompe-server: --registry {url}: cannot reach Redis")
