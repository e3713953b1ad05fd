"""Property: whatever several clients open, use and close, the session quotas hold and evictions are fair.

A second angle on the rules test_limits.py and test_http_hardening.py check one case each of: a client's own
least recently used session goes first, no client is pushed out by another that holds fewer sessions, a
session is evicted exactly when a quota is reached (a closed one no longer counts), and nothing disappears
except by eviction at an open or by an explicit close. On Redis every step goes through either of two
registries with their own connections, as replicas behind a load balancer would, and the quotas are one.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from imagekit import gradient
from trompe_server.errors import SessionGone
from trompe_server.limits import Limits
from trompe_server.registry import Registry

CLIENTS = ["a", "b", "c"]
MAX_SESSIONS, PER_CLIENT = 4, 2
LIMITS = Limits(max_sessions=MAX_SESSIONS, max_sessions_per_client=PER_CLIENT)
pick = st.integers(0, 50)
via = st.integers(0, 1)  # which of the two registries (replicas) a step goes through
step = st.one_of(st.tuples(st.just("open"), st.sampled_from(CLIENTS), via),
                 st.tuples(st.just("use"), pick, via), st.tuples(st.just("close"), pick, via))


@pytest.fixture
def make_replicas(session_storage):
    """The pair of registries, emptied for each example: one object twice in memory, two replicas' own storages on
    Redis."""
    pair = session_storage.replicas(LIMITS, "quotas")

    def emptied() -> list[Registry]:
        for session in pair[0].session_ids():
            pair[0].close_session(session)
        return pair
    return emptied


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, max_size=25))
@example(steps=[("open", "a", 0), ("open", "b", 1), ("open", "b", 0), ("open", "c", 1),
                ("open", "c", 0)])  # full: b, not a, pays
@example(steps=[("open", "a", 0), ("open", "a", 1), ("close", 0, 1), ("open", "a", 1)])  # a closed one is free:
@example(steps=[("open", "a", 0), ("open", "a", 1), ("close", 1, 1), ("open", "a", 1)])  # (either of the two)
def test_quotas_hold_and_evictions_are_fair(make_replicas, steps):
    replicas = make_replicas()
    owner: dict[str, str] = {}  # session -> client
    last_use: dict[str, int] = {}  # session -> when it was last opened or used
    clock = itertools.count()
    try:
        for kind, arg, route in steps:
            registry = replicas[route]
            before = set(registry.session_ids())
            if kind == "open":
                held = {c: sum(owner[s] == c for s in before) for c in CLIENTS}
                session = registry.create_session(arg)
                owner[session], last_use[session] = arg, next(clock)
                after = set(registry.session_ids())
                assert session in after
                evicted = before - after
                assert len(evicted) == (held[arg] >= PER_CLIENT or len(before) >= MAX_SESSIONS)
                for gone in evicted:
                    victim = owner[gone]
                    if victim == arg:  # its own: the least recently used one it had
                        assert last_use[gone] == min(last_use[s] for s in before if owner[s] == arg)
                    else:  # another's: only when the server is full, and from a client holding the most
                        assert len(before) >= MAX_SESSIONS and held[victim] == max(held.values())
                        assert held[victim] >= held[arg]
                        assert last_use[gone] == min(last_use[s] for s in before if owner[s] == victim)
            elif before:
                session = sorted(before)[arg % len(before)]
                if kind == "use":
                    registry.add_input(session, f"i{next(clock)}", gradient(4, 4), "test")
                    last_use[session] = next(clock)
                else:
                    registry.close_session(session)
                    for again in (registry.records, registry.close_session):
                        with pytest.raises(SessionGone, match=f"expired session {session!r}"):
                            again(session)
                assert set(registry.session_ids()) == before - ({session} if kind == "close" else set())
            live = registry.session_ids()
            assert len(live) <= MAX_SESSIONS
            for client in CLIENTS:
                assert sum(owner[s] == client for s in live) <= PER_CLIENT
    finally:
        for registry in set(replicas):
            registry.close()


@pytest.mark.parametrize(("opens", "quota", "flag"), [
    (["a", "a", "a"], "max_sessions_per_client", "--max-sessions-per-client"),  # a's own oldest goes
    (["a", "b", "c", "c", "b"], "max_sessions", "--max-sessions")])  # full: c, holding the most, pays
def test_an_evicted_session_names_the_quota_that_evicted_it_and_the_setting_that_raises_it(make_replicas, opens,
                                                                                          quota, flag):
    """Not "sessions idle for 3600 s are dropped": the quota, its value and where to raise it, on any replica."""
    first, second = make_replicas()
    sessions = [first.create_session(client) for client in opens]
    evicted = sessions[0] if quota == "max_sessions_per_client" else sessions[2]
    with pytest.raises(SessionGone) as gone:
        second.touch(evicted)
    held = getattr(LIMITS, quota)
    assert str(gone.value).startswith(f"session: session {evicted!r} was evicted to make room for newer ones: ")
    assert f"at most {held} sessions ({quota}); raise it on the server ({flag} or TROMPE_{quota.upper()})" \
        in str(gone.value)
    second.close_session(sessions[-1])
    with pytest.raises(SessionGone, match="unknown, closed or expired session"):  # closed: not a quota's doing
        first.touch(sessions[-1])
