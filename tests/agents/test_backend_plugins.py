"""Backend plugins: a backend name two plugins register is refused naming both, as a tool defined twice is.

A third-party distribution is installed the way pip lays one out (distkit) on sys.path.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from distkit import install_module
from trompe_kernel import hookimpl
from trompe_kernel.manager import default_plugins

from trompe_agents import plugins
from trompe_agents.backends.base import BackendError, BackendOptions

PLUGIN = '''from trompe_kernel import hookimpl


@hookimpl
def register_backends(register):
    register({name!r}, lambda options: None)
'''
REMEDY = ("leave one out with the TROMPE_PLUGINS environment variable, or uninstall its distribution "
          "(pip uninstall NAME)")


def install(site: Path, distribution: str, entry_point: str, registers: str) -> None:
    """A distribution whose entry point `entry_point` registers a backend named `registers`."""
    install_module(site, distribution, entry_point, PLUGIN.format(name=registers))


def test_a_third_party_backend_taking_a_built_in_name_is_refused_naming_both(fresh_plugins):
    install(fresh_plugins, "acme-models", "acme", "claude")
    with pytest.raises(BackendError) as info:
        plugins.create_backend("claude", BackendOptions(api_key="k"))  # asked by name: the fast path sees it too
    assert str(info.value) == f"backend 'claude' is registered by both plugin 'acme' and plugin 'claude'; {REMEDY}"
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

    default_plugins().register(Twin(), name="twin")
    with pytest.raises(BackendError, match="backend 'replay' is registered by both plugin 'replay' and plugin 'twin'"):
        plugins.create_backend("replay")


def test_a_third_party_backend_with_a_name_of_its_own_is_offered(fresh_plugins):
    install(fresh_plugins, "acme-models", "acme", "acme-vlm")
    assert "acme-vlm" in plugins.backend_names() and "claude" in plugins.backend_names()
    assert plugins.create_backend("acme-vlm") is None  # the plugin's factory, called with the options
