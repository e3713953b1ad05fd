"""What the Lua scripts promise over time, on a real redis-server: a session in use outlives its keys' TTL with its
pixels, pixels another session adds again live as long as the newest, a session idle past the timeout is swept by
the next open, refused pixels are freed unless a record uses them, and no key is left without a TTL between a
session's open and its first image. Each kills one of the hand-planted Lua bugs (`--group lua`,
tools/mutation.py) that the other storage tests let through."""

from __future__ import annotations

import time

import pytest

from storagekit import StorageKind
from imagekit import gradient
from serverkit import same_pixels
from trompe_server.errors import LimitError
from trompe_server.limits import Limits
from trompe_server.redis_storage import RedisStorage
from trompe_server.storage import Quota

PREFIX = "scripts"
INDEXES = {f"{PREFIX}:sessions", f"{PREFIX}:owners", f"{PREFIX}:largest"}  # and P:c:CLIENT (redis_scripts.py)


@pytest.fixture
def replicas(redis_url):
    """`replicas(limits)`: one more replica's registry on the shared Redis, with a pixel cache of its own (so its
    reads come from Redis)."""
    kind = StorageKind("redis", redis_url)
    yield lambda limits: kind.replicas(limits, PREFIX, n=1)[0]
    kind.close()


def ttls(redis_server) -> dict[str, int]:
    """Every key but the indexes -> its TTL in milliseconds (-1: none)."""
    with redis_server.client() as client:
        return {key.decode(): client.pttl(key) for key in client.scan_iter(f"{PREFIX}:*")
                if key.decode() not in INDEXES and not key.decode().startswith(f"{PREFIX}:c:")}


def test_a_session_opened_before_its_first_image_already_expires(redis_server, redis_url):
    """A replica that dies between the open and the first image must not leave a key behind for ever."""
    storage = RedisStorage(redis_url, 0, PREFIX)
    try:
        storage.create_session("s-1", "a", Quota(max_sessions=4, per_client=2, idle_timeout=2.0), request="r-1")
    finally:
        storage.close()
    found = ttls(redis_server)
    assert set(found) == {f"{PREFIX}:s:s-1:meta", f"{PREFIX}:open:r-1"}
    assert all(0 < ttl <= 4000 for ttl in found.values()), found


def test_a_session_in_use_outlives_its_keys_ttl_with_all_its_pixels(replicas):
    """Idle timeout 1 s, so every key's TTL is 3 s: used every 0.25 s for 3.5 s, the session and both its images
    are still there, read by another replica from Redis."""
    limits = Limits(idle_timeout=1.0)
    one, other = replicas(limits), replicas(limits)
    image = gradient()
    session, _ = one.open_session("a", "original", image, "test")
    crop = image.crop((0, 0, 16, 16))
    one.add_output(session, crop, "crop", {"box": [0, 0, 16, 16]}, ("original",))
    began = time.monotonic()
    while time.monotonic() - began < 3.5:
        one.touch(session)
        time.sleep(0.25)
    records = other.records(session)
    assert [r.id for r in records] == ["original", "img_001"]
    assert same_pixels(other.pixels(session, records[0]), image)
    assert same_pixels(other.pixels(session, records[1]), crop)


def test_pixels_another_session_adds_again_live_as_long_as_the_newest(redis_server, replicas):
    limits = Limits(idle_timeout=2.0)  # TTL 4 s
    one = replicas(limits)
    one.open_session("a", "original", gradient(), "test")
    time.sleep(1.2)
    one.open_session("b", "original", gradient(), "test")  # the same pixels: stored once, shared
    pixels = {key: ttl for key, ttl in ttls(redis_server).items() if key.startswith(f"{PREFIX}:px:")}
    assert len(pixels) == 1 and list(pixels.values())[0] > 3500, pixels


def test_a_session_idle_past_the_timeout_is_swept_by_the_next_open(replicas):
    one = replicas(Limits(idle_timeout=1.0))
    one.open_session("a", "original", gradient(), "test")
    time.sleep(1.3)
    fresh, _ = one.open_session("b", "original", gradient(), "test")
    assert one.session_ids() == [fresh]


def test_pixels_of_a_refused_image_are_freed_unless_a_record_uses_them(redis_server, replicas):
    limits = Limits(max_images=1)
    one, other = replicas(limits), replicas(limits)
    image, unique = gradient(), gradient().rotate(90)
    session, _ = one.open_session("a", "original", image, "test")
    full, _ = one.open_session("b", "original", gradient().crop((0, 0, 8, 8)), "test")
    for refused in (image, unique):  # over max_images: the pixels were written, then the record refused
        with pytest.raises(LimitError):
            one.add_output(full, refused, "rotate", {"angle": 90}, ("original",))
    assert len([key for key in ttls(redis_server) if key.startswith(f"{PREFIX}:px:")]) == 2  # not unique's
    assert same_pixels(other.pixels(session, other.records(session)[0]), image)
