"""Server-test fixtures: apps with the test plugin, the README's plugin installed as a distribution, a Redis,
an S3 server."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from rediskit import RedisServer
from s3kit import CREDENTIALS, S3Server, registry_url
from distkit import install_distribution
from serverkit import EXAMPLE_PLUGIN, ToolkitPlugin
from storagekit import SESSION_RECORDS, SHARED, STORAGES, StorageKind


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    """One real redis-server for a test module (`own_redis` for a test that stops it)."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_redis(tmp_path):
    """A redis-server of this test's own, for tests that stop, kill, pause or fill it."""
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server):
    """A fresh, empty database for each test."""
    with redis_server.client() as client:
        client.flushall()
    return redis_server.url


@pytest.fixture(scope="module")
def s3_server():
    """One real S3-compatible server per module, a fresh bucket per test (`own_s3` for a test that stops it);
    none outlives its module, so the sandbox tests' count of stray processes stays theirs."""
    server = S3Server()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_s3():
    """An S3 server of this test's own, for tests that kill or pause it."""
    server = S3Server()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def s3_credentials(monkeypatch):
    """The S3 test credentials in the environment, where boto3 (and replicas started by the test) find them."""
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def s3_url(redis_url, s3_server, s3_credentials):
    """A `redis+s3://` registry URL on a fresh Redis database and a fresh bucket of the module's S3 server."""
    return registry_url(redis_url, s3_server, s3_server.bucket(f"trompe-{secrets.token_hex(6)}"))


def _storage_kind(request) -> StorageKind:
    url = {"memory": lambda: "memory", "redis": lambda: request.getfixturevalue("redis_url"),
           "s3": lambda: request.getfixturevalue("s3_url")}[request.param]()
    return StorageKind(request.param, url)


@pytest.fixture(params=STORAGES)
def storage(request):
    """Each storage kind in turn (memory, Redis, Redis+S3): every storage contract test runs on all of them."""
    kind = _storage_kind(request)
    yield kind
    kind.close()


@pytest.fixture(params=SHARED)
def shared_storage(request):
    """Each kind that replicas share through Redis in turn, for tests of what it keeps there."""
    kind = _storage_kind(request)
    yield kind
    kind.close()


@pytest.fixture(params=SESSION_RECORDS)
def session_storage(request):
    """Each kind of home for the sessions' records in turn (redis+s3 keeps them in Redis), for property tests."""
    kind = _storage_kind(request)
    yield kind
    kind.close()


@pytest.fixture
def test_app(make_app):
    """An app with the built-in plugins plus the test plugin."""
    def factory(**kwargs):
        return make_app(extra_plugins={"testkit": ToolkitPlugin()}, **kwargs)
    return factory


@pytest.fixture
def example_site(tmp_path) -> Path:
    """A site directory holding the README's third-party plugin, installed as a distribution."""
    return install_distribution(tmp_path / "site", "trompe-posterize", {"posterize": "trompe_posterize"},
                                EXAMPLE_PLUGIN / "trompe_posterize")
