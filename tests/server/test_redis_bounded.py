"""Session operations in Redis do bounded work, and still evict exactly as the in-process registry does.

Opening, touching and closing no longer loop over every live session inside Redis (redis_scripts.py): idle
sessions are swept a few per call, and the client holding the most is read off one sorted set. These tests
check, on a real redis-server, that the quotas still pick the same victims as MemoryStorage for any sequence
of opens, touches and closes by several clients, and that a crowd of sessions gone idle at once costs the
next open only a bounded sweep, yet never makes it evict a live session.
"""

from __future__ import annotations

import secrets

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trompe_server.memory_storage import MemoryStorage
from trompe_server.redis_storage import RedisStorage
from trompe_server.storage import Quota, Refused

BUDGET = 1 << 20
CLIENTS = ("a", "b", "c", "local")  # 'local' has no per-client quota, as stdio and in-process servers
SWEEP = 16  # redis_scripts.SWEEP

operations = st.lists(st.tuples(st.sampled_from(("open", "touch", "close")), st.sampled_from(CLIENTS),
                                st.integers(0, 40)), min_size=1, max_size=40)


def quota(client: str, max_sessions: int, per_client: int, idle: float = 3600.0) -> Quota:
    return Quota(max_sessions, None if client == "local" else per_client, idle)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations, max_sessions=st.integers(1, 6), per_client=st.integers(1, 4))
def test_quotas_evict_the_same_sessions_as_the_in_process_registry(redis_url, ops, max_sessions, per_client):
    redis_store = RedisStorage(redis_url, BUDGET, prefix="p" + secrets.token_hex(4))
    memory_store = MemoryStorage(BUDGET)
    opened: list[str] = []
    try:
        for n, (op, client, pick) in enumerate(ops):
            if op == "open":
                opened.append(f"s{n}")
                for store in (redis_store, memory_store):
                    store.create_session(opened[-1], client, quota(client, max_sessions, per_client))
            elif opened:
                target = opened[pick % len(opened)]
                outcomes = []
                for store in (redis_store, memory_store):
                    try:
                        outcomes.append(store.touch(target, 3600.0) if op == "touch" else store.drop_session(target))
                    except Refused as exc:
                        outcomes.append(exc.reason)
                assert outcomes[0] == outcomes[1], f"{op} {target}: Redis {outcomes[0]}, memory {outcomes[1]}"
            assert sorted(redis_store.session_ids()) == sorted(memory_store.session_ids()), f"after {n}: {op}"
    finally:
        redis_store.close()
        memory_store.close()


def test_sessions_gone_idle_together_cost_the_next_open_a_bounded_sweep_and_no_live_session(redis_url):
    store = RedisStorage(redis_url, BUDGET, prefix="crowd")
    crowd, at_limit = 200, Quota(201, 20, 1.0)  # max_sessions: the crowd plus one
    try:
        with store.client.pipeline(transaction=False) as pipe:  # 200 sessions of client a, long idle
            for n in range(crowd):
                pipe.zadd("crowd:sessions", {f"old{n}": 1.0 + n})
                pipe.hset("crowd:owners", f"old{n}", "a")
                pipe.zadd("crowd:c:a", {f"old{n}": 1.0 + n})
            pipe.execute()
        live = set()
        for n in range(13):  # 13 x 16 sweeps cover the crowd
            live.add(store.create_session(f"new{n}", "b", at_limit))
            assert store.client.zcard("crowd:sessions") == max(len(live), crowd - SWEEP * (n + 1) + len(live)), \
                "each open swept at most its share of the idle sessions, and evicted none of b's"
        assert set(store.session_ids()) == live
        assert store.client.zcard("crowd:c:a") == 0 and store.client.hlen("crowd:owners") == len(live)
    finally:
        store.close()
