"""`redis+s3`: an image whose object reached the bucket but whose record Redis then refused or never got leaves
no object behind (the call fails as the registry's failure and nothing is kept), one whose record Redis stored
but whose reply was lost keeps its object, on a real redis-server and a real S3-compatible server (s3kit.py); an
object a killed replica left between the two writes goes with its session."""

from __future__ import annotations

import secrets

import pytest

from imagekit import gradient
from s3kit import registry_url
from trompe_server.errors import RegistryUnavailable
from trompe_server.limits import Limits
from trompe_server.registry import Registry
from trompe_server.s3_storage import S3Storage

LIMITS = Limits(max_sessions=4, max_images=3)


@pytest.fixture
def bucket(s3_server, s3_credentials) -> str:
    return s3_server.bucket(f"trompe-{secrets.token_hex(6)}")


@pytest.fixture
def registry(own_redis, s3_server, bucket):
    """A registry on a Redis of the test's own (which it fills or kills) and a fresh bucket."""
    made = Registry(LIMITS, S3Storage(registry_url(own_redis.url, s3_server, bucket), LIMITS.memory_budget))
    yield made
    made.close()


def crop(registry: Registry, session: str) -> str:
    return registry.add_output(session, registry.load(session, "original").crop((0, 0, 16, 16)), "crop",
                               {"box": [0, 0, 16, 16]}, ("original",)).id


def objects(s3_server, bucket: str, session: str) -> list[str]:
    return [key for key in s3_server.keys(bucket) if key.startswith(f"trompe/{session}/")]


def test_an_image_redis_refuses_to_record_leaves_no_object(registry, own_redis, s3_server, bucket):
    session, _ = registry.open_session("a", "original", gradient(), "test")
    original = objects(s3_server, bucket, session)
    with own_redis.client() as client:
        client.config_set("maxmemory", 1)  # full: the pixel key after the upload is refused (OOM)
        try:
            with pytest.raises(RegistryUnavailable, match=r"is full \(over its maxmemory\)"):
                crop(registry, session)
            assert objects(s3_server, bucket, session) == original
        finally:
            client.config_set("maxmemory", 0)
    assert crop(registry, session) == "img_001" and len(objects(s3_server, bucket, session)) == 2

    left = f"trompe/{session}/{secrets.token_hex(16)}"  # what a replica killed between the two writes leaves
    s3_server.client.put_object(Bucket=bucket, Key=left, Body=b"pixels")
    assert registry.close_session(session) == 2 and objects(s3_server, bucket, session) == []


def test_an_image_whose_redis_dies_after_the_upload_leaves_no_object(registry, own_redis, s3_server, bucket):
    session, _ = registry.open_session("a", "original", gradient(), "test")
    original = objects(s3_server, bucket, session)

    def redis_dies(**_) -> None:  # boto3's own hook, once the object is in the bucket
        own_redis.proc.kill()
        own_redis.proc.wait()

    registry.storage.s3.meta.events.register("after-call.s3.PutObject", redis_dies)
    with pytest.raises(RegistryUnavailable, match="is unreachable"):
        crop(registry, session)
    assert objects(s3_server, bucket, session) == original



@pytest.mark.parametrize("ran", [True, False], ids=["stored-reply-lost", "lost-before-redis"])
def test_an_append_whose_reply_never_came_keeps_its_object_exactly_when_redis_stored_it(ran, registry, s3_server,
                                                                                       bucket):
    """Both sides of the in-doubt window: the connection drops after the APPEND was sent, and Redis either ran it
    (the reply was lost on the way back) or never got it. The call fails either way; when the record was stored
    its object stays (the image reads back whole from the bucket, and the session's close takes it), else the
    object goes at once."""
    import redis

    session, _ = registry.open_session("a", "original", gradient(), "test")
    scripts = registry.storage._scripts
    append = scripts["APPEND"]

    def reply_lost(*args, **kwargs):  # redis-py's registered script, run on the server (or not), no reply back
        scripts["APPEND"] = append
        if ran:
            append(*args, **kwargs)
        raise redis.ConnectionError("Connection closed by server.")

    scripts["APPEND"] = reply_lost
    with pytest.raises(RegistryUnavailable):
        crop(registry, session)
    assert [r.id for r in registry.records(session)] == ["original", "img_001"][: 2 if ran else 1]
    assert len(objects(s3_server, bucket, session)) == (2 if ran else 1)
    if ran:
        registry.storage.cache.clear()
        assert registry.load(session, "img_001").size == (16, 16)  # read back from the bucket, not the cache
    assert registry.close_session(session) == (2 if ran else 1) and objects(s3_server, bucket, session) == []
