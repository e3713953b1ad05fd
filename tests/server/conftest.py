"""Server-test fixtures: apps with the test plugin, the README's plugin installed as a distribution, a Redis."""

from __future__ import annotations

from pathlib import Path

import pytest

from rediskit import RedisServer
from serverkit import EXAMPLE_PLUGIN, ToolkitPlugin, install_distribution


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
