"""`--registry` picks its storage by URL scheme, through the `register_storages` hook: the built-ins register
as a plugin does, a plugin adds a scheme, a scheme registered twice is refused naming both plugins, and an
unknown one is a start-up error (exit status 2) listing the known schemes."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from imagekit import data_url, gradient
from trompe_server import hookimpl
from trompe_server.app import ServerConfig, create_app
from trompe_server.cli import main
from trompe_kernel.errors import PluginConflict
from trompe_server.memory_storage import MemoryStorage
from trompe_server.storages import parse_registry

BUILT_IN = ["memory", "redis", "redis+s3", "rediss", "rediss+s3", "unix"]


class KeepInList:
    """A third-party storage plugin: `list://` keeps sessions in memory and counts the storages it made."""

    def __init__(self):
        self.urls: list[str] = []

    @hookimpl
    def register_storages(self, register):
        register("list", self.make)

    def make(self, url, limits):
        self.urls.append(url)
        return MemoryStorage(limits.memory_budget)


class SecondRedis:
    @hookimpl
    def register_storages(self, register):
        register("redis", lambda url, limits: MemoryStorage(limits.memory_budget))


async def test_a_plugin_scheme_is_chosen_by_the_url(tmp_path):
    plugin = KeepInList()
    app = create_app(ServerConfig(roots=[tmp_path], registry="list://anything", extra_plugins={"lists": plugin}))
    try:
        async with Client(app.mcp) as client:
            opened = await client.call_tool("open_session", {"source": data_url(gradient())})
            assert not opened.is_error, opened.content[0].text
        assert plugin.urls == ["list://anything"] and isinstance(app.registry.storage, MemoryStorage)
    finally:
        app.registry.close()


def test_a_scheme_registered_twice_is_refused_naming_both_plugins(tmp_path):
    with pytest.raises(PluginConflict, match="storage scheme 'redis' is registered by both plugin 'second' and "
                                             "plugin 'storages'; leave one out with the TROMPE_PLUGINS "):
        create_app(ServerConfig(roots=[tmp_path], extra_plugins={"second": SecondRedis()}))


def test_an_unknown_scheme_exits_2_listing_the_known_ones(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--registry", "mongo://:secret@db:27017/x", "--list-tools"])
    assert done.value.code == 2
    assert capsys.readouterr().err.strip() == (
        f"trompe-server: --registry mongo://:***@db:27017/x: unknown storage scheme 'mongo'; known: "
        f"{', '.join(BUILT_IN)} (a storage plugin adds more)")


@pytest.mark.parametrize("raw", ["bogus", "memory://elsewhere", "://x", "redis://"])
def test_what_is_not_a_registry_url_is_named_with_the_accepted_forms(raw, capsys):
    with pytest.raises(SystemExit) as done:
        main(["--registry", raw, "--list-tools"])
    assert done.value.code == 2
    assert f"argument --registry: {raw!r} is not a registry; accepted: memory, redis://" in capsys.readouterr().err


@pytest.mark.parametrize("raw", ["memory", "memory://", " memory "])
def test_memory_has_one_spelling(raw):
    assert parse_registry(raw) == "memory"


def test_the_listing_names_each_plugins_storage_schemes(capsys):
    main(["--list-plugins", "--json"])
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["storages"]["storages"] == BUILT_IN
    assert "storages" not in rows["draw"]
