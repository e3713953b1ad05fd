"""Backend plugins: a backend name two plugins register is refused naming both, as a tool defined twice is.

A third-party distribution is installed the way pip lays one out (a package beside its *.dist-info with an
entry_points.txt, https://packaging.python.org/en/latest/specifications/entry-points/) on sys.path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trompe_agents import plugins
from trompe_agents.backends.base import BackendError, BackendOptions
from trompe_agents.hookspecs import hookimpl

PLUGIN = '''from trompe_agents.hookspecs import hookimpl


@hookimpl
def register_backends(register):
    register({name!r}, lambda options: None)
'''


def install(site: Path, distribution: str, entry_point: str, registers: str) -> None:
    """A distribution whose `trompe.backends` entry point `entry_point` registers a backend named `registers`."""
    module = f"{distribution.replace('-', '_')}_plugin"
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(PLUGIN.format(name=registers))
    info = site / f"{distribution.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[trompe.backends]\n{entry_point} = {module}\n")


def test_a_third_party_backend_taking_a_built_in_name_is_refused_naming_both(fresh_plugins):
    install(fresh_plugins, "acme-models", "acme", "claude")
    with pytest.raises(BackendError) as info:
        plugins.create_backend("claude", BackendOptions(api_key="k"))  # asked by name: the fast path sees it too
    assert str(info.value) == ("backend 'claude' is registered by both plugin 'acme' and plugin 'claude'; "
                               "uninstall the one you do not want (pip uninstall NAME)")
    with pytest.raises(BackendError, match="registered by both plugin 'acme' and plugin 'claude'"):
        plugins.backend_names()


def test_two_third_party_plugins_registering_one_name_are_refused(fresh_plugins):
    install(fresh_plugins, "acme-models", "acme", "mine")
    install(fresh_plugins, "other-models", "other", "mine")
    with pytest.raises(BackendError, match="backend 'mine' is registered by both plugin 'acme' and plugin 'other'"):
        plugins.backend_names()


def test_a_plugin_registered_in_process_is_held_to_the_same_rule(fresh_plugins):
    class Twin:
        @hookimpl
        def register_backends(self, register):
            register("replay", lambda options: None)

    plugins.plugin_manager().register(Twin(), name="twin")
    with pytest.raises(BackendError, match="backend 'replay' is registered by both plugin 'replay' and plugin 'twin'"):
        plugins.create_backend("replay")


def test_a_third_party_backend_with_a_name_of_its_own_is_offered(fresh_plugins):
    install(fresh_plugins, "acme-models", "acme", "acme-vlm")
    assert "acme-vlm" in plugins.backend_names() and "claude" in plugins.backend_names()
    assert plugins.create_backend("acme-vlm") is None  # the plugin's factory, called with the options
