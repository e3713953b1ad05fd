"""Property: whatever several clients open, use and close, the session quotas hold and evictions are fair.

A second angle on the rules test_limits.py and test_http_hardening.py check one case each of: a client's own
least recently used session goes first, no client is pushed out by another that holds fewer sessions, and
nothing disappears except by eviction at an open or by an explicit close.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from imagekit import gradient
from trompe_server.errors import ToolInputError
from trompe_server.limits import Limits
from trompe_server.registry import Registry

CLIENTS = ["a", "b", "c"]
MAX_SESSIONS, PER_CLIENT = 4, 2
pick = st.integers(0, 50)
step = st.one_of(st.tuples(st.just("open"), st.sampled_from(CLIENTS)),
                 st.tuples(st.just("use"), pick), st.tuples(st.just("close"), pick))


@settings(max_examples=150, deadline=None)
@given(st.lists(step, max_size=25))
@example([("open", "a"), ("open", "b"), ("open", "b"), ("open", "c"), ("open", "c")])  # full: b, not a, pays
def test_quotas_hold_and_evictions_are_fair(steps):
    registry = Registry(Limits(max_sessions=MAX_SESSIONS, max_sessions_per_client=PER_CLIENT))
    owner: dict[str, str] = {}  # session -> client
    last_use: dict[str, int] = {}  # session -> when it was last opened or used
    clock = itertools.count()
    try:
        for kind, arg in steps:
            before = set(registry.session_ids())
            if kind == "open":
                held = {c: sum(owner[s] == c for s in before) for c in CLIENTS}
                session = registry.create_session(arg)
                owner[session], last_use[session] = arg, next(clock)
                after = set(registry.session_ids())
                assert session in after
                evicted = before - after
                assert len(evicted) <= 1
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
                        with pytest.raises(ToolInputError, match=f"expired session {session!r}"):
                            again(session)
                assert set(registry.session_ids()) == before - ({session} if kind == "close" else set())
            live = registry.session_ids()
            assert len(live) <= MAX_SESSIONS
            for client in CLIENTS:
                assert sum(owner[s] == client for s in live) <= PER_CLIENT
    finally:
        registry.close()
