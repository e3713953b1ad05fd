"""Backends come from plugins (entry-point group `trompe.backends`), built-in vendors included."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pluggy
from trompe_server.errors import PluginConflict
from trompe_server.plugins import entry_points_by_name

from . import hookspecs
from .backends.base import Backend, BackendError, BackendOptions

ENTRY_POINT_GROUP = "trompe.backends"
Factory = Callable[[BackendOptions], Backend]


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    """The manager backend plugins are loaded into, on demand; tests may register more on it."""
    pm = pluggy.PluginManager("trompe_agents")
    pm.add_hookspecs(hookspecs)
    pm.load_errors = {}  # plugin name -> why it did not load, reported when someone asks for it
    return pm


def _load(only: str | None = None) -> pluggy.PluginManager:
    """Import the entry-point plugins (just the one named `only`, when given: vendor SDKs are slow to import)."""
    pm = plugin_manager()
    try:
        entry_points = entry_points_by_name(ENTRY_POINT_GROUP).values()
    except PluginConflict as exc:  # a third-party `claude` must not silently replace the built-in one
        raise BackendError(str(exc)) from None
    for ep in entry_points:
        if (only is not None and ep.name != only) or pm.get_plugin(ep.name) is not None or ep.name in pm.load_errors:
            continue
        try:
            pm.register(ep.load(), name=ep.name)
        except Exception as exc:  # noqa: BLE001 -- one broken backend must not take the others down
            pm.load_errors[ep.name] = f"{type(exc).__name__}: {exc}"
    pm.check_pending()
    return pm


def _factories(pm: pluggy.PluginManager) -> dict[str, Factory]:
    factories: dict[str, Factory] = {}

    def register(name: str, factory: Factory) -> None:
        factories[name] = factory

    for impl in pm.hook.register_backends.get_hookimpls():
        impl.function(register=register)
    return dict(sorted(factories.items()))


def backend_factories() -> dict[str, Factory]:
    """name -> factory for every backend the installed plugins register."""
    return _factories(_load())


def backend_names() -> list[str]:
    return list(backend_factories())


def load_errors() -> dict[str, str]:
    """Backend plugins that failed to import, with the reason (e.g. a missing SDK)."""
    return dict(plugin_manager().load_errors)


def create_backend(name: str, options: BackendOptions | None = None) -> Backend:
    """A ready backend by name; with `options.record` every request/response is also saved to a cassette."""
    options = options or BackendOptions()
    factories = _factories(_load(only=name))
    if name not in factories:
        factories = backend_factories()
    if name not in factories:
        errors = load_errors()
        if name in errors:
            raise BackendError(f"backend {name!r} could not be loaded: {errors[name]}")
        raise BackendError(f"unknown backend {name!r}; available: {', '.join(factories) or 'none'}")
    backend = factories[name](options)
    if options.record and name != "replay":
        from .backends.replay import Recorder

        backend = Recorder(backend, options.record)
    return backend


def describe_backends() -> list[dict[str, Any]]:
    """One row per backend: name and whether it loaded (for `--list-backends`-style output)."""
    rows = [{"name": name, "loaded": True, "error": None} for name in backend_names()]
    rows += [{"name": name, "loaded": False, "error": error} for name, error in load_errors().items()]
    return sorted(rows, key=lambda r: r["name"])
