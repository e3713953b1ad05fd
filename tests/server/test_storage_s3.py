"""The `redis+s3` storage on a real redis-server and a real S3-compatible server (s3kit.py): the pixels are
objects in the bucket, Redis holds the records only, a session's objects go when it goes (closed at once,
evicted or expired by the sweep), and an S3 that is down, hung or killed mid-call is a clear error for that
call, never a wrong image; once it is back, calls work again."""

from __future__ import annotations

import threading
import time

import pytest
from mcp import Client

from imagekit import data_url, gradient, result_image
from s3kit import registry_url
from rediskit import start_replica
from serverkit import same_pixels, stop
from trompe_server.app import ServerConfig, create_app
from trompe_server.errors import RegistryUnavailable, SessionGone
from trompe_server.limits import Limits
from trompe_server.registry import Registry
from trompe_server.s3_storage import MARKER, S3Storage, split_url
from trompe_server.wire import FAILURE_META

LIMITS = Limits(max_sessions=8, max_sessions_per_client=2, max_images=3)
CROP = {"box": [0, 0, 16, 16]}


@pytest.fixture
def make_registry():
    """Registries on `redis+s3` URLs, closed after the test."""
    made = []

    def factory(url: str, limits: Limits = LIMITS) -> Registry:
        made.append(Registry(limits, S3Storage(url, limits.memory_budget)))
        return made[-1]

    yield factory
    for registry in made:
        registry.close()


def bucket_of(url: str) -> str:
    return url.split("bucket=")[1].split("&")[0]


def crop(registry: Registry, session: str, request: str | None = None) -> str:
    im = registry.load(session, "original").crop((0, 0, 16, 16))
    return registry.add_output(session, im, "crop", CROP, ("original",), request).id


def objects_of(s3_server, url: str, session: str) -> list[str]:
    return [key for key in s3_server.keys(bucket_of(url)) if key.startswith(f"trompe/{session}/")]


def test_pixels_are_objects_and_redis_holds_only_records(make_registry, s3_server, s3_url, redis_server):
    one, two = make_registry(s3_url), make_registry(s3_url)  # two replicas: the second reads from the bucket
    session, _ = one.open_session("a", "original", gradient(), "test")
    assert crop(one, session) == "img_001"
    assert len(objects_of(s3_server, s3_url, session)) == 2
    assert same_pixels(two.load(session, "img_001"), gradient().crop((0, 0, 16, 16)))
    assert same_pixels(two.load(session, "original"), gradient())
    assert [(r.id, r.parents) for r in two.records(session)] == [("original", ()), ("img_001", ("original",))]
    with redis_server.client() as client:
        pixels = [client.get(key) for key in client.scan_iter("trompe:px:*")]
    assert pixels == [MARKER, MARKER], "Redis keeps a marker where the redis storage keeps the pixels"


def test_a_closed_session_takes_its_objects_with_it(make_registry, s3_server, s3_url):
    registry = make_registry(s3_url)
    kept, _ = registry.open_session("a", "original", gradient(), "test")
    closed, _ = registry.open_session("a", "original", gradient(), "test")  # equal pixels: an object of its own
    crop(registry, closed)
    assert registry.close_session(closed) == 2
    assert objects_of(s3_server, s3_url, closed) == []
    assert len(objects_of(s3_server, s3_url, kept)) == 1 and same_pixels(registry.load(kept, "original"), gradient())


def test_a_session_closed_elsewhere_while_its_pixels_are_fetched_reads_as_closed(make_registry, s3_url,
                                                                                 monkeypatch):
    reader, closer = make_registry(s3_url), make_registry(s3_url)
    session, _ = reader.open_session("a", "original", gradient(), "test")
    reader.storage.cache.clear()
    fetch = reader.storage._read_pixels

    def closed_first(session_id: str, digest: str):  # the other replica's close lands between record and GET
        closer.close_session(session_id)
        return fetch(session_id, digest)

    monkeypatch.setattr(reader.storage, "_read_pixels", closed_first)
    with pytest.raises(SessionGone, match=f"unknown, closed or expired session '{session}'"):
        reader.load(session, "original")


def test_refused_and_retried_images_leave_no_object(make_registry, s3_server, s3_url):
    registry = make_registry(s3_url)
    session, _ = registry.open_session("a", "original", gradient(), "test")
    crop(registry, session, request="r1")
    assert crop(registry, session, request="r1") == "img_001"  # a retry: the stored version, no second object
    crop(registry, session)
    with pytest.raises(Exception, match="max_images"):
        crop(registry, session)
    assert len(objects_of(s3_server, s3_url, session)) == 3


def test_the_sweep_deletes_the_objects_of_evicted_and_expired_sessions(make_registry, s3_server, s3_url,
                                                                       redis_server):
    registry = make_registry(s3_url)
    evicted, _ = registry.open_session("a", "original", gradient(), "test")
    expired, _ = registry.open_session("b", "original", gradient(), "test")
    registry.open_session("a", "original", gradient(), "test")
    live, _ = registry.open_session("a", "original", gradient(), "test")  # a's quota of 2 evicts its first
    assert evicted not in registry.session_ids()
    with redis_server.client() as client:  # Redis's own expiry, sooner: the idle session's keys are gone
        for key in client.scan_iter(f"trompe:s:{expired}:*"):
            client.pexpire(key, 1)
    time.sleep(0.05)
    assert registry.storage.sweep() == 2
    assert objects_of(s3_server, s3_url, evicted) == objects_of(s3_server, s3_url, expired) == []
    assert len(objects_of(s3_server, s3_url, live)) == 1 and same_pixels(registry.load(live, "original"), gradient())
    assert registry.storage.sweep() == 0


def test_replicas_sweep_by_themselves(make_registry, s3_server, s3_url):
    url = f"{s3_url}&sweep=1"
    registry = make_registry(url, Limits(max_sessions_per_client=1))
    first, _ = registry.open_session("a", "original", gradient(), "test")
    registry.open_session("a", "original", gradient(), "test")
    deadline = time.monotonic() + 10
    while objects_of(s3_server, url, first):
        assert time.monotonic() < deadline, "the evicted session's object is still in the bucket"
        time.sleep(0.1)


async def test_lineage_and_pixels_through_the_mcp_client(s3_url, tmp_path):
    app = create_app(ServerConfig(roots=[tmp_path], registry=s3_url))
    try:
        async with Client(app.mcp) as client:
            opened = await client.call_tool("open_session", {"source": data_url(gradient())})
            session = opened.structured_content["session"]
            first = await client.call_tool("crop", {"session": session, "image": "original", "box": [8, 8, 40, 24]})
            second = await client.call_tool("crop", {"session": session, "image": "img_001", "box": [0, 0, 16, 8]})
            assert second.structured_content["parents"] == ["img_001"], first
            view = await client.call_tool("view_image", {"session": session, "image": "img_002"})
            assert same_pixels(result_image(view), gradient().crop((8, 8, 40, 24)).crop((0, 0, 16, 8)))
    finally:
        app.registry.close()


async def test_an_s3_refusal_reaches_the_client_as_the_servers_failure(s3_server, s3_url, tmp_path):
    """What an agent reads: a tool error marked `trompe/failure: registry` (an infrastructure failure, which the
    agents' tool client resends and then fails the sample with), not a result and not the model's mistake."""
    app = create_app(ServerConfig(roots=[tmp_path], registry=s3_url))
    bucket = bucket_of(s3_url)
    try:
        async with Client(app.mcp) as client:
            opened = await client.call_tool("open_session", {"source": data_url(gradient())})
            session = opened.structured_content["session"]
            for key in s3_server.keys(bucket):
                s3_server.client.delete_object(Bucket=bucket, Key=key)
            s3_server.client.delete_bucket(Bucket=bucket)  # an operator's mistake: S3 refuses every request
            result = await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 8, 8]})
            assert result.is_error and result.meta[FAILURE_META] == "registry"
            assert result.content[0].text.startswith(
                f"Error executing tool crop: registry: the object storage (S3 bucket {bucket!r} at "
                f"{s3_server.endpoint}) did not store the image; nothing was changed (NoSuchBucket: ")
            s3_server.bucket(bucket)
            again = await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 8, 8]})
            assert again.structured_content["image"] == "img_001"
    finally:
        app.registry.close()


@pytest.mark.slow  # starts a server process
async def test_a_server_started_as_the_docs_say_keeps_its_pixels_in_the_bucket(make_registry, s3_server, s3_url,
                                                                             tmp_path):
    proc, url = start_replica(s3_url, tmp_path)  # trompe-server --http --registry "redis+s3://...?bucket=..."
    try:
        async with Client(url) as client:
            opened = await client.call_tool("open_session", {"source": data_url(gradient())})
            session = opened.structured_content["session"]
            cropped = await client.call_tool("crop", {"session": session, "image": "original", "box": [8, 8, 40, 24]})
            assert cropped.structured_content["image"] == "img_001", cropped.content[0].text
            assert len(objects_of(s3_server, s3_url, session)) == 2
            other = make_registry(s3_url)  # another replica reads what this one stored
            assert same_pixels(other.load(session, "img_001"), gradient().crop((8, 8, 40, 24)))
            await client.call_tool("close_session", {"session": session})
        assert objects_of(s3_server, s3_url, session) == []
    finally:
        stop(proc)


def unreachable(exc: pytest.ExceptionInfo, bucket: str) -> None:
    """The error a caller reads when S3 fails: infrastructure (`registry`), naming the bucket."""
    assert isinstance(exc.value, RegistryUnavailable) and exc.value.failure == "registry"
    assert f"the object storage (S3 bucket {bucket!r} at http://127.0.0.1:" in str(exc.value)


@pytest.mark.slow  # starts S3 servers of its own
def test_a_killed_s3_is_a_clear_error_and_a_restarted_one_works(make_registry, own_s3, redis_url, s3_credentials):
    bucket = own_s3.bucket("killed")
    url = registry_url(redis_url, own_s3, bucket, s3_attempts="1")
    registry = make_registry(url)
    session, _ = registry.open_session("a", "original", gradient(), "test")
    own_s3.kill()
    with pytest.raises(RegistryUnavailable) as stored:
        crop(registry, session)
    unreachable(stored, bucket)
    assert "did not store the image; nothing was changed" in str(stored.value)
    assert [r.id for r in registry.records(session)] == ["original"], "nothing half-stored"
    registry.storage.cache.clear()  # what another replica, or this one later, reads: the bucket
    with pytest.raises(RegistryUnavailable) as read:
        registry.load(session, "original")
    unreachable(read, bucket)
    assert registry.close_session(session) == 1  # closing needs Redis only; its object is left for the sweep

    own_s3.start()  # back, empty, as a replaced store: the operator creates the bucket again
    own_s3.bucket(bucket)
    session, _ = registry.open_session("a", "original", gradient(), "test")
    crop(registry, session)
    assert same_pixels(make_registry(url).load(session, "img_001"), gradient().crop((0, 0, 16, 16)))


def test_pixels_deleted_behind_the_servers_back_are_an_error_not_an_image(make_registry, s3_server, s3_url):
    registry = make_registry(s3_url)
    session, _ = registry.open_session("a", "original", gradient(), "test")
    registry.storage.cache.clear()
    for key in objects_of(s3_server, s3_url, session):
        s3_server.client.delete_object(Bucket=bucket_of(s3_url), Key=key)
    with pytest.raises(RegistryUnavailable, match="no longer holds object .*deleted it behind the server's back"):
        registry.load(session, "original")
    registry.close_session(session)
    with pytest.raises(SessionGone):
        registry.load(session, "original")


@pytest.mark.slow  # starts S3 servers of its own
def test_a_hung_s3_fails_the_call_in_bounded_time_and_one_killed_mid_call_too(make_registry, own_s3, redis_url,
                                                                            s3_credentials):
    bucket = own_s3.bucket("hung")
    registry = make_registry(registry_url(redis_url, own_s3, bucket, s3_timeout="0.5", s3_attempts="1"))
    session, _ = registry.open_session("a", "original", gradient(), "test")
    own_s3.pause()
    started = time.monotonic()
    with pytest.raises(RegistryUnavailable) as hung:
        crop(registry, session)
    assert time.monotonic() - started < 5
    unreachable(hung, bucket)
    own_s3.resume()
    assert crop(registry, session) == "img_001"

    own_s3.pause()
    failures: list[Exception] = []

    def store() -> None:
        try:
            crop(registry, session)
        except Exception as exc:  # noqa: BLE001 -- the test reads what the caller got
            failures.append(exc)

    call = threading.Thread(target=store)
    call.start()
    time.sleep(0.2)  # the PUT is on the wire, unanswered
    own_s3.kill()
    call.join(10)
    assert not call.is_alive() and isinstance(failures[0], RegistryUnavailable), failures
    assert "the object storage" in str(failures[0])
    assert [r.id for r in registry.records(session)] == ["original", "img_001"]


def test_the_redis_part_of_the_url_keeps_its_own_options():
    assert split_url("rediss+s3://:pw@h:6380/2?socket_timeout=5&bucket=pix&endpoint=http://s3:9000&sweep=30") == (
        "rediss://:pw@h:6380/2?socket_timeout=5", {"bucket": "pix", "endpoint": "http://s3:9000", "sweep": "30"})


def test_start_up_problems_name_the_url_and_the_fix(redis_url, s3_server, s3_credentials):
    good = registry_url(redis_url, s3_server, s3_server.bucket("startup"))
    with pytest.raises(ValueError, match=r"bucket='A' is not an S3 bucket name .*\?bucket=trompe-pixels"):
        S3Storage(good.replace("bucket=startup", "bucket=A"), 1 << 20)
    with pytest.raises(ValueError, match=r": bucket= is required, an S3 bucket name \(3 to 63"):
        S3Storage(good.replace("bucket=startup", "region=us-east-1"), 1 << 20)
    with pytest.raises(ValueError, match="cannot use S3 bucket 'nosuch' at http://127.0.0.1:.*create the bucket"):
        S3Storage(good.replace("bucket=startup", "bucket=nosuch"), 1 << 20)
    with pytest.raises(ValueError, match=r"s3_timeout='-1'; accepted: a number from 0.1"):
        S3Storage(f"{good}&s3_timeout=-1", 1 << 20)
    with pytest.raises(ValueError, match="endpoint='ftp://x' is not an http:// or https:// URL"):
        S3Storage(good.replace(f"endpoint={s3_server.endpoint}", "endpoint=ftp://x"), 1 << 20)
