"""The one plugin manager: every hook of hookspecs.py, the built-ins of builtins.BUILTINS, the third-party plugins
of the entry-point group `trompe` (and, deprecated, `trompe.tools` and `trompe.backends`), and plugins registered in
process. Each hook's implementations are imported only when the hook is first asked for."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pluggy

from . import hookspecs
from .builtins import BUILTINS, DISTRIBUTION, Builtin
from .errors import PluginConflict, PluginError
from .registry import PluginRegistry
from .version import __version__

GROUP = "trompe"  # the one entry-point group: [project.entry-points.trompe] NAME = "module"
OLD_GROUPS = ("trompe.tools", "trompe.backends")  # still read, each plugin found there with one deprecation line
_deprecations_said: set[tuple[str, str]] = set()  # (distribution, plugin): said once a process


@dataclass(frozen=True)
class PluginSettings:
    """How the running command spells the plugin settings, so a message names one that works there."""

    allow: str = "the TROMPE_PLUGINS environment variable"
    strict: str = "TROMPE_STRICT_PLUGINS=1"


def _distribution(ep: importlib.metadata.EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "an unknown distribution"


def _deprecated(ep: importlib.metadata.EntryPoint) -> None:
    key = (_distribution(ep), ep.name)
    if key not in _deprecations_said:
        _deprecations_said.add(key)
        print(f"trompe: plugin {ep.name!r} of {_distribution(ep)} is in the deprecated entry-point group "
              f"{ep.group!r}; it still loads, but its package should name it in [project.entry-points.{GROUP}]",
              file=sys.stderr)


def third_party_entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The installed plugins by name, the old groups' included; a name two distributions claim (a built-in's
    included) is refused naming both, as the later one would otherwise silently replace the earlier."""
    claimed = {b.name: (DISTRIBUTION, b.module) for b in BUILTINS}
    found: dict[str, importlib.metadata.EntryPoint] = {}
    installed = importlib.metadata.entry_points()  # every distribution's file read once, not once a group
    for group in (GROUP, *OLD_GROUPS):
        for ep in installed.select(group=group):
            if _distribution(ep) == DISTRIBUTION:
                continue  # an older install's entry points for the built-ins, which arrive through BUILTINS
            owner = claimed.setdefault(ep.name, (_distribution(ep), ep.value))
            if owner != (_distribution(ep), ep.value):
                raise PluginConflict(f"plugin name {ep.name!r} is claimed by two distributions: {owner[0]} "
                                     f"({owner[1]}) and {_distribution(ep)} ({ep.value}); uninstall one of them "
                                     "(pip uninstall NAME)")
            if ep.name not in found:
                found[ep.name] = ep
                if group != GROUP:
                    _deprecated(ep)
    return found


def _names(items: Iterable[str]) -> set[str]:
    return {item.strip() for item in items if item.strip()}


class Plugins:
    """One pluggy manager over every hook; `allow` (default: TROMPE_PLUGINS) names the third-party and tool plugins
    to load (the other built-ins always load), `extra` maps names to objects with `@hookimpl` functions, registered
    as-is (tests, embedding programs). A plugin that fails to import is skipped with one line on stderr (and kept in
    `load_errors`) unless it was named in `allow` or `strict` (default: TROMPE_STRICT_PLUGINS) is set."""

    def __init__(self, allow: Iterable[str] | None = None, extra: Mapping[str, Any] | None = None,
                 strict: bool | None = None, settings: PluginSettings = PluginSettings()):
        if allow is None and os.environ.get("TROMPE_PLUGINS"):
            allow = os.environ["TROMPE_PLUGINS"].split(",")
        self.strict = os.environ.get("TROMPE_STRICT_PLUGINS", "") not in ("", "0") if strict is None else strict
        self.settings = settings
        self.wanted = None if allow is None else _names(allow)
        self.entry_points = third_party_entry_points()
        choosable = self.entry_points.keys() | {b.name for b in BUILTINS if b.tools}
        unknown = sorted(self.wanted - choosable - set(extra or {})) if self.wanted is not None else []
        if unknown:
            raise PluginError(f"unknown plugin(s) {', '.join(unknown)} in {settings.allow}; installed: "
                              f"{', '.join(sorted(choosable))}")
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.load_errors: dict[str, str] = {}  # plugin name -> why it did not import
        self._third_party_loaded = False
        for name, plugin in (extra or {}).items():
            self.register(plugin, name)

    def register(self, plugin: Any, name: str) -> None:
        """Add a plugin in process (an object or module with `@hookimpl` functions), held to the same rules; one
        implementing a hook trompe does not have (a misspelt name, a newer release's hook) is refused naming it."""
        try:
            self.pm.register(plugin, name=name)
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            if self.pm.get_plugin(name) is not None:
                self.pm.unregister(name=name)
            why = "; ".join(line.strip() for line in str(exc).splitlines())
            raise PluginError(f"plugin {name!r} cannot be used: {why}; the hooks and their arguments are in "
                              "trompe_kernel/hookspecs.py (docs/plugins.md)") from None

    def _load(self, name: str, value: str, load: Callable[[], Any]) -> None:
        if self.pm.get_plugin(name) is not None or name in self.load_errors:
            return
        try:  # one broken plugin must say which it is, and not stop the others
            self.register(load(), name)
            return
        except PluginError as exc:  # a hook trompe does not have
            problem, self.load_errors[name] = str(exc), f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 -- whatever its import raised
            problem = f"plugin {name!r} ({value}) failed to import: {type(exc).__name__}: {exc}"
            self.load_errors[name] = f"{type(exc).__name__}: {exc}"
        if self.strict or (self.wanted is not None and name in self.wanted):
            raise PluginError(problem)
        print(f"trompe: skipping {problem}; what it registers is unavailable (set {self.settings.strict} to stop "
              "instead)", file=sys.stderr)

    def _wants(self, builtin: Builtin) -> bool:
        return self.wanted is None or not builtin.tools or builtin.name in self.wanted

    def implementations(self, hook: str, only: str | None = None) -> list[pluggy.HookImpl]:
        """The implementations of `hook`, importing what provides it first: every third-party plugin (each may
        implement any hook) and the built-ins that implement it (with `only`, just the built-in so named)."""
        if not self._third_party_loaded:
            self._third_party_loaded = True
            for name, ep in self.entry_points.items():
                if self.wanted is None or name in self.wanted:
                    self._load(name, ep.value, ep.load)
        for builtin in BUILTINS:
            if hook in builtin.hooks and self._wants(builtin) and only in (None, builtin.name):
                self._load(builtin.name, builtin.module, functools.partial(importlib.import_module, builtin.module))
        return getattr(self.pm.hook, hook).get_hookimpls()

    def registry(self, hook: str, what: str, entry: Callable[..., Any] = lambda thing: thing,
                 only: str | None = None) -> PluginRegistry:
        """name -> what the plugins register through `hook` with register(name, ...) (`entry` builds it from the
        arguments after the name); a name two plugins register is a PluginConflict naming both."""
        found = PluginRegistry(what, self.settings.allow)
        for impl in self.implementations(hook, only):
            impl.function(register=_registrar(found, entry, impl.plugin_name))
        return found

    def distribution(self, name: str) -> tuple[str, str] | None:
        """The (distribution, version) a loaded plugin came from; None for one registered in process."""
        if name in self.entry_points and self.entry_points[name].dist is not None:
            return self.entry_points[name].dist.name, self.entry_points[name].dist.version
        if name in {b.name for b in BUILTINS}:
            return DISTRIBUTION, __version__
        return None

    def names(self) -> list[str]:
        """The plugins loaded so far, by name."""
        return sorted(name for name, _plugin in self.pm.list_name_plugin())


def _registrar(found: PluginRegistry, entry: Callable[..., Any], plugin: str) -> Callable[..., None]:
    def register(name: Any, *args: Any, **kwargs: Any) -> None:
        found.add(name, entry(*args, **kwargs), plugin)

    return register


@functools.cache
def default_plugins() -> Plugins:
    """The process's manager for the agents' hooks (the server builds its own from its settings); tests may
    register more on it, and `default_plugins.cache_clear()` starts over."""
    return Plugins()
