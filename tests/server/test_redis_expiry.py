"""Redis forgets abandoned sessions by itself: every key the storage writes expires, the few index keys aside.

The key layout is redis_scripts.py's docstring. After a workload through two replicas' registries on a real
redis-server (opens with and without request ids, tool outputs, retried appends, pixels shared between
sessions, closes, evictions), the keyspace is scanned: each key has a TTL a little over the idle timeout,
except the indexes that change only together with the live sessions, which hold exactly those. Then the
sessions are left idle, and Redis itself removes every per-session key. On `redis+s3` the same holds, and the
sweep then deletes the forgotten sessions' objects from the bucket.
"""

from __future__ import annotations

import time

import pytest

from imagekit import gradient
from trompe_server.limits import Limits
from trompe_server.registry import Registry
from trompe_server.s3_storage import S3Storage

PREFIX = "expiry"
IDLE = 2.0  # seconds: the keys' TTL is a little over it (RedisStorage._ttl)
LIMITS = Limits(idle_timeout=IDLE, max_sessions=6, max_sessions_per_client=3)
INDEXES = {f"{PREFIX}:sessions", f"{PREFIX}:owners", f"{PREFIX}:largest"}  # and P:c:CLIENT, one per client


def is_index(key: str) -> bool:
    return key in INDEXES or key.startswith(f"{PREFIX}:c:")


@pytest.fixture
def replicas(shared_storage):
    """Two replicas' registries on one Redis (on `redis+s3`, with their pixels in one bucket)."""
    return shared_storage.replicas(LIMITS, PREFIX)


def workload(replicas: list[Registry]) -> list[str]:
    """Everything that writes keys, spread over both replicas; returns the sessions still open."""
    one, two = replicas
    image = gradient()
    opened = []
    for n in range(5):  # client a goes over its quota of 3: its oldest sessions are evicted
        session, _ = (one if n % 2 else two).open_session("a", "original", image, "test", request=f"open-{n}")
        opened.append(session)
    again, _ = one.open_session("a", "original", image, "test", request="open-4")  # a retried open
    assert again == opened[4]
    session, _ = two.open_session("b", "original", image, "test")  # the same pixels as a's: shared
    opened.append(session)
    for registry, target in ((one, opened[4]), (two, opened[5])):
        registry.add_output(target, image.crop((0, 0, 8, 8)), "crop", {"box": [0, 0, 8, 8]}, ("original",),
                            request="crop-1")
        registry.add_output(target, image.crop((0, 0, 8, 8)), "crop", {"box": [0, 0, 8, 8]}, ("original",),
                            request="crop-1")  # retried: no second image
        registry.add_output(target, image.rotate(90), "rotate", {"angle": 90}, ("original",))
    one.close_session(opened[3])
    live = set(one.session_ids())
    assert live == {opened[2], opened[4], opened[5]}, "a's two oldest were evicted, one was closed"
    return sorted(live)


def keys(client) -> dict[str, int]:
    """Every key under the prefix -> its TTL in milliseconds (-1: none)."""
    return {key.decode(): client.pttl(key) for key in client.scan_iter(f"{PREFIX}:*")}


def test_every_key_but_the_indexes_expires_and_the_indexes_hold_only_live_sessions(redis_server, replicas):
    live = workload(replicas)
    with redis_server.client() as client:
        found = keys(client)
        kinds = {key.split(":")[1] for key in found if not is_index(key)}
        assert {"s", "px", "ref", "nonce", "open"} <= kinds, "the workload wrote every kind of key"
        lasting = sorted(key for key, ttl in found.items() if ttl < 0 and not is_index(key))
        assert not lasting, f"keys that never expire: {lasting}"
        longest = max(ttl for key, ttl in found.items() if not is_index(key))
        assert longest <= (IDLE * 1.25 + 2) * 1000, "a TTL a little over the idle timeout, not more"
        assert sorted(m.decode() for m in client.zrange(f"{PREFIX}:sessions", 0, -1)) == live
        assert sorted(k.decode() for k in client.hkeys(f"{PREFIX}:owners")) == live
        per_client = {key: sorted(m.decode() for m in client.zrange(key, 0, -1))
                      for key in found if key.startswith(f"{PREFIX}:c:")}
        assert sorted(s for held in per_client.values() for s in held) == live


def test_sessions_left_idle_vanish_from_redis_without_anyone_closing_them(redis_server, replicas):
    workload(replicas)
    deadline = time.monotonic() + IDLE * 1.25 + 10
    with redis_server.client() as client:
        while any(not is_index(key) for key in keys(client)):
            assert time.monotonic() < deadline, f"still there: {sorted(k for k in keys(client) if not is_index(k))}"
            time.sleep(0.2)
        # the next open prunes the indexes of the sessions Redis forgot
        session, _ = replicas[0].open_session("c", "original", gradient(), "test")
        assert client.zcard(f"{PREFIX}:sessions") == 1 and client.hlen(f"{PREFIX}:owners") == 1
    storage = replicas[0].storage
    if isinstance(storage, S3Storage):  # and the sweep empties the bucket of what Redis forgot
        storage.sweep()
        objects = storage.s3.list_objects_v2(Bucket=storage.bucket).get("Contents", [])
        assert [item["Key"].split("/")[1] for item in objects] == [session]
