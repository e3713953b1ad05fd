"""Ids are never given twice, on every storage: a session id once, an image id once per session, and a closed or
evicted session never comes back, even when another replica (its own storage object on the same Redis, and on
`redis+s3` the same bucket) writes to it afterwards."""

from __future__ import annotations

import pytest

from imagekit import gradient
from trompe_server.errors import LimitError, SessionGone
from trompe_server.limits import Limits
from trompe_server.registry import Registry

SMALL = gradient().crop((0, 0, 8, 8))
LIMITS = Limits(max_sessions=4, max_sessions_per_client=2, max_session_bytes=64 * 48 * 3 + 8 * 8 * 3 * 3)


@pytest.fixture
def replicas(storage):
    """Two registries on one storage: the same object in memory, two replicas' own connections on Redis (and S3)."""
    return storage.replicas(LIMITS, "ids")


def output(registry: Registry, session: str, image=SMALL) -> str:
    return registry.add_output(session, image, "crop", {"box": [0, 0, 8, 8]}, ("original",)).id


def test_image_ids_count_up_and_a_refused_image_takes_none(replicas):
    one, two = replicas
    session, _ = one.open_session("a", "original", gradient(), "test")
    ids = [output(one, session), output(two, session)]
    with pytest.raises(LimitError):
        output(one, session, gradient())  # over max_session_bytes: refused whole
    ids.append(output(two, session))
    with pytest.raises(LimitError):
        output(two, session)  # the session is now full
    assert ids == ["img_001", "img_002", "img_003"]
    assert [r.id for r in one.records(session)] == ["original", *ids]


def test_session_ids_are_never_given_twice_and_a_gone_session_stays_gone(replicas):
    one, two = replicas
    seen = []
    for n in range(12):  # client a's quota of 2 evicts its oldest; every third is closed by the other replica
        session, _ = (one if n % 2 else two).open_session("a", "original", gradient(), "test")
        seen.append(session)
        if n % 3 == 0:
            (two if n % 2 else one).close_session(session)
    live = set(one.session_ids())
    gone = [s for s in seen if s not in live]
    assert len(set(seen)) == len(seen) and len(gone) == len(seen) - len(live) > 0
    for session in gone:
        for registry in replicas:
            with pytest.raises(SessionGone):
                output(registry, session)  # a late write from any replica does not bring it back
    assert set(one.session_ids()) == live == set(two.session_ids())
