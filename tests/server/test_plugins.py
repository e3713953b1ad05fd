"""Plugins: discovery of installed distributions, listings, allow-list, tag filter and clear start-up errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from distkit import install_distribution
from serverkit import SERVER, ToolkitPlugin, env_with
from trompe_kernel.errors import PluginConflict, PluginError
from trompe_kernel.manager import PluginSettings, Plugins
from trompe_server import hookimpl
from trompe_server.app import ServerConfig, create_app
from trompe_server.plugins import collect_tools


def server(*args: str, site: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([SERVER, *args], env=env_with(site, **env), capture_output=True, text=True, timeout=120)


def test_installed_distribution_is_discovered(example_site):
    done = server("--list-tools", site=example_site)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert rows["posterize"].split()[1:3] == ["posterize", "example"]
    assert "Keep only the top bits of each channel" in rows["posterize"]
    assert rows["crop"].split()[1:3] == ["draw", "core"]  # the built-ins beside it (trompe_kernel BUILTINS)

    listing = {p["name"]: p for p in json.loads(server("--list-plugins", "--json", site=example_site).stdout)}
    assert listing["posterize"] == {"name": "posterize", "distribution": "trompe-posterize", "version": "0.1.0",
                                    "tools": ["posterize"]}
    assert listing["draw"]["distribution"] == "trompe" and "crop" in listing["draw"]["tools"]


def test_allow_list_and_tag_filter_from_environment(example_site):
    done = server("--list-tools", "--json", "--tools", "example", site=example_site, TROMPE_PLUGINS="posterize,draw")
    assert [(t["name"], t["plugin"], t["tags"]) for t in json.loads(done.stdout)] == \
        [("posterize", "posterize", ["example"])]


def test_same_tool_name_in_two_plugins_is_a_startup_error(tmp_path):
    package = tmp_path / "src" / "trompe_clash"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from trompe_server import hookimpl\n\n\n"
        "def crop(ctx, image: str):\n    \"\"\"Another crop.\"\"\"\n\n\n"
        "@hookimpl\ndef register_tools(register):\n    register(crop)\n")
    site = install_distribution(tmp_path / "site", "trompe-clash", {"clash": "trompe_clash"}, package)
    done = server("--list-tools", site=site)
    assert done.returncode != 0 and not done.stdout
    assert ("tool 'crop' is registered by both plugin 'clash' and plugin 'draw'; leave one out with --plugins (or "
            "TROMPE_PLUGINS), or uninstall its distribution (pip uninstall NAME)") in done.stderr
    assert server("--list-tools", "--plugins", "clash", site=site).stdout.split()[:2] == ["crop", "clash"]


def test_unknown_plugin_names_are_refused():
    with pytest.raises(PluginError, match="unknown plugin.* nosuch .*installed: .*draw"):
        Plugins(["draw", "nosuch"])
    done = server("--list-tools", TROMPE_PLUGINS="nosuch")
    assert done.returncode != 0 and "unknown plugin(s) nosuch" in done.stderr


def test_broken_plugin_names_itself(tmp_path):
    package = tmp_path / "src" / "trompe_broken"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("import no_such_module_anywhere\n")
    site = install_distribution(tmp_path / "site", "trompe-broken", {"broken": "trompe_broken"}, package)
    done = server("--list-tools", "--plugins", "broken", site=site)
    assert done.returncode != 0
    assert "plugin 'broken' (trompe_broken) failed to import: ModuleNotFoundError" in done.stderr


def test_unknown_tags_are_refused():
    message = r"unknown tag\(s\) nosuch in --tools/TROMPE_TOOLS; the loaded plugins provide: .*core"
    with pytest.raises(PluginError, match=message):
        collect_tools(Plugins(), ["core", "nosuch"])


async def test_tag_filter_exposes_only_those_tags(make_app):
    every = collect_tools(Plugins())
    expected = {name for name, spec in every.items() if spec.tags & {"core", "analysis"}}
    assert expected and expected != set(every)
    async with Client(make_app(tags=["core", "analysis"]).mcp) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    session_tools = {"open_session", "add_image", "list_images", "view_image", "close_session"}
    assert names == expected | session_tools


async def test_allow_list_in_process(make_app):
    async with Client(make_app(plugins=["analysis"]).mcp) as client:
        plugins = {t.meta["plugin"] for t in (await client.list_tools()).tools}
    assert plugins == {"analysis", "trompe_server"}


def test_extra_plugins_register_programmatically_and_conflicts_name_both():
    app = create_app(ServerConfig(plugins=[], extra_plugins={"testkit": ToolkitPlugin()}))
    assert {spec.plugin for spec in app.tools.values()} == {"testkit"}
    app.registry.close()

    class Copycat:
        @hookimpl
        def register_tools(self, register):
            register(lambda ctx, image: None, name="invert_colors")

    with pytest.raises(PluginConflict, match="'invert_colors' is registered by both plugin 'copycat' and plugin "
                                             "'testkit'"):
        create_app(ServerConfig(plugins=[], extra_plugins={"testkit": ToolkitPlugin(), "copycat": Copycat()}))


def test_readme_plugin_example_is_the_tested_package():
    """The README's plugin listing must be exactly the package the discovery tests install."""
    doc = (Path(__file__).parents[2] / "docs" / "plugins.md").read_text()
    example = Path(__file__).parent / "example_plugin"
    for name, fence in (("pyproject.toml", "toml"), ("trompe_posterize/__init__.py", "python")):
        assert f"`{name}`:\n\n```{fence}\n{(example / name).read_text()}```" in doc, name


def fake_package(tmp_path: Path, name: str, source: str) -> Path:
    package = tmp_path / "src" / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(source)
    return package


def test_an_app_names_the_plugin_settings_of_the_command_that_made_it_and_stops_on_a_broken_one_when_strict(
        tmp_path, monkeypatch, capsys):
    """In-process, as the CLI tests above are not: a broken plugin is skipped with a warning naming how the
    command spells strictness, stops the app under strict_plugins, and each refusal names the allow-list setting."""
    package = fake_package(tmp_path, "trompe_broken", "import no_such_module_anywhere\n")
    monkeypatch.syspath_prepend(str(install_distribution(tmp_path / "site", "trompe-broken",
                                                         {"broken": "trompe_broken"}, package)))
    for name in ("TROMPE_PLUGINS", "TROMPE_STRICT_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    settings = PluginSettings(allow="--allow-these", strict="--be-strict")
    app = create_app(ServerConfig(plugin_settings=settings))
    app.registry.close()
    assert "crop" in app.tools and "failed to import: ModuleNotFoundError" in (err := capsys.readouterr().err)
    assert "(set --be-strict to stop instead)" in err
    with pytest.raises(PluginError, match=r"^plugin 'broken' \(trompe_broken\) failed to import"):
        create_app(ServerConfig(strict_plugins=True, plugin_settings=settings))
    with pytest.raises(PluginError, match="unknown plugin\\(s\\) nope in --allow-these; installed: "):
        create_app(ServerConfig(plugins=["nope"], plugin_settings=settings))

    class Usurper:
        @hookimpl
        def register_tools(self, register):
            register(lambda ctx: None, name="open_session")

    with pytest.raises(PluginConflict, match="leave the plugin out with --allow-these$"):
        create_app(ServerConfig(plugins=[], extra_plugins={"usurper": Usurper()}, plugin_settings=settings))


def test_third_party_entry_point_named_like_a_builtin_is_refused_naming_both(tmp_path):
    """A distribution registering `draw` once silently replaced the core tools."""
    package = fake_package(tmp_path, "evil_draw", "")
    site = install_distribution(tmp_path / "site", "evil-draw", {"draw": "evil_draw"}, package)
    done = server("--list-tools", site=site)
    assert done.returncode != 0 and not done.stdout
    assert ("plugin name 'draw' is claimed by two distributions: trompe (trompe_draw) and evil-draw (evil_draw); "
            "uninstall one of them (pip uninstall NAME)") in done.stderr


def test_a_plugin_that_fails_to_import_is_skipped_with_a_warning(tmp_path):
    package = fake_package(tmp_path, "trompe_broken", "import no_such_module_anywhere\n")
    site = install_distribution(tmp_path / "site", "trompe-broken", {"broken": "trompe_broken"}, package)
    done = server("--list-tools", site=site)
    assert done.returncode == 0, done.stderr
    assert "crop" in done.stdout.split()
    assert ("trompe: skipping plugin 'broken' (trompe_broken) failed to import: ModuleNotFoundError" in done.stderr
            and "set --strict-plugins (or TROMPE_STRICT_PLUGINS=1) to stop instead" in done.stderr)
    strict = server("--list-tools", "--strict-plugins", site=site)
    assert strict.returncode != 0 and "plugin 'broken' (trompe_broken) failed to import" in strict.stderr


def test_clash_message_names_the_setting_of_the_command_that_printed_it(tmp_path):
    """Agents build the server in-process and have no --plugins: they must be told TROMPE_PLUGINS."""
    package = fake_package(tmp_path, "trompe_clash", "from trompe_server import hookimpl\n\n\n"
                           "def crop(ctx, image: str):\n    \"\"\"Another crop.\"\"\"\n\n\n"
                           "@hookimpl\ndef register_tools(register):\n    register(crop)\n")
    site = install_distribution(tmp_path / "site", "trompe-clash", {"clash": "trompe_clash"}, package)
    embedded = subprocess.run([sys.executable, "-c", "from trompe_server.app import create_app; create_app()"],
                              env=env_with(site), capture_output=True, text=True, timeout=120)
    assert "leave one out with the TROMPE_PLUGINS environment variable" in embedded.stderr
    assert "--plugins" not in embedded.stderr
    assert "leave one out with --plugins (or TROMPE_PLUGINS)" in server("--list-tools", site=site).stderr
