"""Plugins (entry-point group `trompe.backends`) register backends, dataset formats, scorers, probe families,
sandboxes, SEVEX strategies, executors and `trompe` subcommands through the hooks of hookspecs.py, the built-ins
included; a name registered twice is refused naming both."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

import pluggy
from trompe_server.errors import PluginConflict
from trompe_server.plugins import entry_points_by_name

from . import hookspecs
from .backends.base import Backend, BackendError, BackendOptions
from .backends.settings import BackendSettings

ENTRY_POINT_GROUP = "trompe.backends"
DISTRIBUTION = "trompe"  # the built-in backends' distribution (pyproject.toml)
Factory = Callable[[BackendOptions], Backend]


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    """The manager backend plugins are loaded into, on demand; tests may register more on it."""
    pm = pluggy.PluginManager("trompe_agents")
    pm.add_hookspecs(hookspecs)
    pm.load_errors = {}  # plugin name -> why it did not load, reported when someone asks for it
    pm.third_party_loaded = False  # whether registered() has imported the third-party plugins yet
    return pm


def _load(only: str | None = None) -> pluggy.PluginManager:
    """Import the entry-point plugins: with `only`, the built-in named so and every third-party one (vendor SDKs
    are slow to import, and a third-party plugin may register any backend name, the built-ins' included)."""
    pm = plugin_manager()
    try:
        entry_points = entry_points_by_name(ENTRY_POINT_GROUP).values()
    except PluginConflict as exc:  # a third-party `claude` must not silently replace the built-in one
        raise BackendError(str(exc)) from None
    for ep in entry_points:
        skipped = only is not None and ep.name != only and ep.dist is not None and ep.dist.name == DISTRIBUTION
        if skipped or pm.get_plugin(ep.name) is not None or ep.name in pm.load_errors:
            continue
        try:
            pm.register(ep.load(), name=ep.name)
        except Exception as exc:  # noqa: BLE001 -- one broken backend must not take the others down
            pm.load_errors[ep.name] = f"{type(exc).__name__}: {exc}"
    pm.check_pending()
    return pm


def _collect(pm: pluggy.PluginManager, hook: str, what: str, error: type[Exception],
             entry: Callable[..., Any] = lambda thing: thing) -> dict[str, Any]:
    """name -> what the plugins register through `hook` (`entry` builds it from register's arguments after the
    name); a name two plugins register is refused naming both (a third-party `claude` must not silently replace
    the built-in one, as a tool defined twice is refused)."""
    found: dict[str, Any] = {}
    owners: dict[str, str] = {}

    def registrar(plugin: str) -> Callable[[str, Any], None]:
        def register(name: str, *thing: Any, **facets: Any) -> None:
            if name in owners:
                first, second = sorted((owners[name], plugin))
                raise error(f"{what} {name!r} is registered by both plugin {first!r} and plugin {second!r}; "
                            "uninstall the one you do not want (pip uninstall NAME)")
            found[name], owners[name] = entry(*thing, **facets), plugin

        return register

    for impl in getattr(pm.hook, hook).get_hookimpls():
        impl.function(register=registrar(impl.plugin_name))
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend: how to make one, and the settings (`--backend-option`) it takes."""

    factory: Factory
    settings: type[BackendSettings] = BackendSettings  # a plugin that declares none takes none


def _entries(pm: pluggy.PluginManager) -> dict[str, BackendEntry]:
    return _collect(pm, "register_backends", "backend", BackendError, BackendEntry)


def registered(hook: str, what: str, builtin: ModuleType, builtin_name: str) -> dict[str, Any]:
    """name -> what every plugin registers through `hook` (e.g. register_executors), the built-in plugin
    `builtin` included (registered as `builtin_name`); a name two plugins register is a PluginConflict."""
    pm = plugin_manager()
    if not pm.third_party_loaded:  # once: scanning the entry points takes ~15 ms
        _load(only="")  # third-party plugins only: the built-in backends' vendor SDKs are not needed here
        pm.third_party_loaded = True
    if pm.get_plugin(builtin_name) is None:
        pm.register(builtin, name=builtin_name)
    return _collect(pm, hook, what, PluginConflict)


def backend_entries() -> dict[str, BackendEntry]:
    """name -> factory and settings class of every backend the installed plugins register."""
    return _entries(_load())


def backend_names() -> list[str]:
    return list(backend_entries())


def load_errors() -> dict[str, str]:
    """Backend plugins that failed to import, with the reason (e.g. a missing SDK)."""
    return dict(plugin_manager().load_errors)


def backend_entry(name: str) -> BackendEntry:
    """The backend registered as `name` (only its own plugin and the third-party ones imported when they can say)."""
    entries = _entries(_load(only=name))
    if name not in entries:
        entries = backend_entries()
    if name not in entries:
        errors = load_errors()
        if name in errors:
            raise BackendError(f"backend {name!r} could not be loaded: {errors[name]}")
        raise BackendError(f"unknown backend {name!r}; available: {', '.join(entries) or 'none'}")
    return entries[name]


def backend_settings(name: str, pairs: Iterable[tuple[str, Any]] | Mapping[str, Any] = ()) -> BackendSettings:
    """The backend's settings from KEY=VALUE pairs (SettingError: a key it does not take, a value out of range)."""
    return backend_entry(name).settings.from_pairs(pairs, backend=name)


def create_backend(name: str, options: BackendOptions | None = None) -> Backend:
    """A ready backend by name; with `options.record` every request/response is also saved to a cassette.
    `options.settings` must be the backend's own settings class (backend_settings builds one)."""
    options = options or BackendOptions()
    entry = backend_entry(name)
    backend = entry.factory(replace(options, settings=entry.settings.of(options, exactly=True)))
    if options.record and name != "replay":
        from .backends.replay import Recorder

        backend = Recorder(backend, options.record)
    return backend


def describe_backends() -> list[dict[str, Any]]:
    """One row per backend: name and whether it loaded (for `--list-backends`-style output)."""
    rows = [{"name": name, "loaded": True, "error": None} for name in backend_names()]
    rows += [{"name": name, "loaded": False, "error": error} for name, error in load_errors().items()]
    return sorted(rows, key=lambda r: r["name"])
