"""What a caller reads when another replica (or another request) changes a shared session in between.

Tool calls run in threads and replicas share Redis, so a session can be closed, or evicted by opens elsewhere,
between two steps of one registry call. `Meanwhile` scripts that moment on a real storage: right after one
storage step, the other party's call runs on the same storage. Each test runs on memory, on a real Redis, and on
a real Redis with the pixels in a real S3-compatible server.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PIL import Image

from imagekit import gradient
from trompe_server.errors import LimitError, SessionGone, ToolInputError
from trompe_server.limits import Limits
from trompe_server.memory_storage import MemoryStorage
from trompe_server.redis_storage import RedisStorage
from trompe_server.registry import Registry
from trompe_server.storage import Quota, Refused


class Meanwhile:
    """A storage on which `elsewhere(storage, *args)` runs once, right after the first call of `step` here."""

    def __init__(self, storage, step: str, elsewhere: Callable[..., object]):
        self.storage, self.step, self.elsewhere = storage, step, elsewhere

    def __getattr__(self, name):
        method = getattr(self.storage, name)
        if name != self.step:
            return method

        def then(*args):
            result = method(*args)
            self.step = ""  # once
            self.elsewhere(self.storage, *args)
            return result
        return then


@pytest.fixture
def shared_storage(storage):
    """A factory of storages shared with an imagined second replica; each is closed after the test."""
    return storage.open


def gone_message(session: str, limits: Limits) -> str:
    return (f"session: unknown, closed or expired session {session!r} (sessions idle for {limits.idle_timeout:g} "
            "s are dropped); call open_session first")


def test_a_session_evicted_by_opens_elsewhere_before_its_first_image_says_why(shared_storage):
    limits = Limits(max_sessions_per_client=1, max_sessions=5)
    storage = shared_storage(limits)
    opened_elsewhere = Meanwhile(storage, "create_session",
                                 lambda s, _id, client, quota, _request: s.create_session("s_elsewhere", client, quota))
    with pytest.raises(SessionGone) as error:
        Registry(limits, opened_elsewhere).open_session("client-a", "original", gradient(), "g.png")
    assert str(error.value) == (
        "session: the new session was evicted before its first image was stored: more sessions were opened "
        "at once than the quotas allow (max_sessions_per_client 1, max_sessions 5); raise them on the server "
        "(--max-sessions-per-client, --max-sessions) or open fewer at once")
    assert storage.session_ids() == ["s_elsewhere"]  # the other open holds the client's one session


def test_a_refused_first_image_is_the_error_shown_even_if_its_session_was_evicted_meanwhile(shared_storage):
    limits = Limits(max_sessions_per_client=1, max_pixels=100)
    storage = shared_storage(limits)
    opened_elsewhere = Meanwhile(storage, "create_session",
                                 lambda s, _id, client, quota, _request: s.create_session("s_elsewhere", client, quota))
    with pytest.raises(LimitError, match=r"^source: 64x48 = 3072 pixels is over the 100 pixel limit"):
        Registry(limits, opened_elsewhere).open_session("client-a", "original", gradient(), "g.png")
    assert storage.session_ids() == ["s_elsewhere"]


CALLS = {  # a registry call, and the storage step after which the session is closed elsewhere
    "records": (lambda r, s: r.records(s), "touch"),
    "record": (lambda r, s: r.record(s, "original"), "touch"),
    "load": (lambda r, s: r.load(s, "original"), "record"),
    "add_output": (lambda r, s: r.add_output(s, gradient(8, 8), "crop", {}, ("original",)), "touch"),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_session_closed_in_between_reads_as_closed_with_its_id(shared_storage, call):
    """Not a KeyError, not another session's id: the documented error naming the session the caller sent."""
    limits = Limits()
    storage = shared_storage(limits)
    registry = Registry(limits, storage)
    session, _ = registry.open_session("local", "original", gradient(), "g.png")
    action, step = CALLS[call]
    registry.storage = Meanwhile(storage, step, lambda s, session_id, *_: s.drop_session(session_id))
    with pytest.raises(SessionGone) as error:
        action(registry, session)
    assert str(error.value) == gone_message(session, limits)
    assert storage.session_ids() == []


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_session_evicted_in_between_names_the_quota_that_evicted_it(shared_storage, call):
    """An eviction landing while a call runs (under load, between its touch and its read or write) names the quota
    and the setting that raises it, as one found by the touch does: not "idle for ... s"."""
    limits = Limits(max_sessions_per_client=1)
    storage = shared_storage(limits)
    registry = Registry(limits, storage)
    session, _ = registry.open_session("client-a", "original", gradient(), "g.png")
    action, step = CALLS[call]
    quota = Quota(limits.max_sessions, 1, limits.idle_timeout)
    registry.storage = Meanwhile(storage, step, lambda s, *_: s.create_session("s_elsewhere", "client-a", quota))
    with pytest.raises(SessionGone) as error:
        action(registry, session)
    assert str(error.value) == (
        f"session: session {session!r} was evicted to make room for newer ones: its client (bearer token, else "
        "connection) may hold at most 1 sessions (max_sessions_per_client); raise it on the server "
        "(--max-sessions-per-client or TROMPE_MAX_SESSIONS_PER_CLIENT) or open fewer at once (a lower "
        "--concurrency, a token per agent); call open_session again")
    assert storage.session_ids() == ["s_elsewhere"]


def test_unknown_images_name_the_argument_the_caller_gives(shared_storage):
    limits = Limits()
    registry = Registry(limits, shared_storage(limits))
    session, _ = registry.open_session("local", "original", gradient(), "g.png")
    with pytest.raises(ToolInputError, match=r"^image: unknown image 'img_004'; this session has: original$"):
        registry.load(session, "img_004")
    with pytest.raises(ToolInputError, match=r"^base: unknown image 'x'; this session has: original$"):
        registry.load(session, "x", "base")


def test_limit_errors_report_what_the_storage_counted(shared_storage):
    """The storage holds the truth across replicas: the message carries its count, not a local guess."""
    limits = Limits(max_images=2, max_session_bytes=64 * 48 * 3 + 100)
    registry = Registry(limits, shared_storage(limits))
    session, _ = registry.open_session("local", "original", gradient(), "g.png")
    with pytest.raises(LimitError) as error:
        registry.add_output(session, gradient(8, 8), "crop", {}, ("original",))
    assert str(error.value) == (f"session: would hold {64 * 48 * 3 + 192} pixel bytes, over the "
                                f"{64 * 48 * 3 + 100} byte limit (max_session_bytes)")
    registry.add_output(session, gradient(5, 5), "crop", {}, ("original",))
    with pytest.raises(LimitError) as error:
        registry.add_output(session, gradient(1, 1), "crop", {}, ("original",))
    assert str(error.value) == "session: already holds 2 images (max_images); close it and open a new one"


def test_a_refusal_the_rules_do_not_know_is_shown_as_it_is():
    """A third-party storage's new reason must not be worded as some other limit the caller did not hit."""
    limits = Limits()
    storage = MemoryStorage(limits.memory_budget)

    def refuse(*_):
        raise Refused("max_frames", 3)
    registry = Registry(limits, Meanwhile(storage, "touch", refuse))
    session = registry.create_session()
    with pytest.raises(Refused, match="max_frames"):
        registry.add_input(session, "original", Image.new("RGB", (4, 4)), "test")
    registry.close()


def test_a_request_stored_once_is_answered_with_what_it_stored(shared_storage):
    """A resend after a lost reply (same request id, maybe through another replica) adds no second version."""
    limits = Limits()
    registry = Registry(limits, shared_storage(limits))
    opened = [registry.open_session("client-a", "original", gradient(), "g.png", "open-request-1") for _ in range(2)]
    assert opened[0][0] == opened[1][0] and opened[1][1].id == "original"
    session = opened[0][0]
    first = registry.add_output(session, gradient(8, 8), "crop", {"box": [0, 0, 8, 8]}, ("original",), "crop-1")
    again = registry.add_output(session, gradient(8, 8), "crop", {"box": [0, 0, 8, 8]}, ("original",), "crop-1")
    assert again == first and first.id == "img_001"
    other = registry.add_output(session, gradient(8, 8), "crop", {"box": [0, 0, 8, 8]}, ("original",), "crop-2")
    assert other.id == "img_002"  # a new request is a new version, even of the same pixels
    assert [r.id for r in registry.records(session)] == ["original", "img_001", "img_002"]
    registry.close_session(session)
    reopened, _ = registry.open_session("client-a", "original", gradient(), "g.png", "open-request-1")
    assert reopened != session  # the session that request opened is gone: a new one, not an error


def test_pixels_freed_by_a_close_between_their_write_and_the_record_are_written_again(redis_url):
    """Two sessions share identical pixels; one closing between the replica's SET and its APPEND script must
    not leave a record without pixels, nor skip an id."""
    limits = Limits()
    storage = RedisStorage(redis_url, limits.memory_budget)
    registry = Registry(limits, storage)
    session, _ = registry.open_session("local", "original", gradient(), "g.png")
    written = storage.client.set

    def freed_at_once(key, value, **options):  # the other session's close lands right after the first SET
        result = written(key, value, **options)
        storage.client.set = written
        storage.client.delete(key)
        return result
    storage.client.set = freed_at_once
    storage.cache.clear()
    record = registry.add_output(session, gradient(8, 8), "crop", {}, ("original",))
    assert record.id == "img_001"
    storage.cache.clear()
    assert registry.load(session, "img_001").tobytes() == gradient(8, 8).tobytes()
    assert registry.add_output(session, gradient(4, 4), "crop", {}, ("original",)).id == "img_002"
    registry.close()
