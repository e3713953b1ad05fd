"""Backends by name: what the plugins register through `register_backends` (trompe_kernel), made ready to use."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from trompe_kernel.errors import PluginError
from trompe_kernel.manager import default_plugins

from .backends.base import Backend, BackendError, BackendOptions
from .backends.settings import BackendSettings

Factory = Callable[[BackendOptions], Backend]


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend: how to make one, and the settings (`--backend-option`) it takes."""

    factory: Factory
    settings: type[BackendSettings] = BackendSettings  # a plugin that declares none takes none


def _entries(only: str | None = None) -> dict[str, BackendEntry]:
    """name -> entry; with `only`, just that built-in is imported (a vendor SDK is slow to import) beside the
    third-party plugins (which may register any name, a built-in's included)."""
    try:
        return dict(default_plugins().registry("register_backends", "backend", BackendEntry, only=only))
    except PluginError as exc:  # a third-party `claude` must not silently replace the built-in one
        raise BackendError(str(exc)) from None


def backend_entries() -> dict[str, BackendEntry]:
    """name -> factory and settings class of every backend the installed plugins register."""
    return _entries()


def backend_names() -> list[str]:
    return list(backend_entries())


def load_errors() -> dict[str, str]:
    """Plugins that failed to import, with the reason (e.g. a missing SDK)."""
    return dict(default_plugins().load_errors)


def backend_entry(name: str) -> BackendEntry:
    """The backend registered as `name` (only its own plugin and the third-party ones imported when they can say)."""
    entries = _entries(only=name)
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
