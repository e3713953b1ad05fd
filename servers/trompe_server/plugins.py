"""Finding plugins through entry points and collecting the tools they register."""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pluggy

from . import hookspecs
from .admission import WORK_FACTOR
from .errors import PluginConflict, PluginError
from .storages import storage_factories
from .toolapi import ToolSpec

ENTRY_POINT_GROUP = "trompe.tools"
SERVER_TOOLS = ("open_session", "add_image", "list_images", "view_image", "close_session")  # the server's own
MAX_COPIES = 64  # above any real tool; keeps a typo from making every call wait for the whole budget
TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")  # printable ASCII: no lookalikes, nothing invisible


def _names(items: Iterable[str]) -> set[str]:
    return {item.strip() for item in items if item.strip()}


@dataclass(frozen=True)
class PluginSettings:
    """How the running command spells the plugin settings, so a message names one that works there."""

    allow: str = "the TROMPE_PLUGINS environment variable"
    strict: str = "TROMPE_STRICT_PLUGINS=1"


SERVER_SETTINGS = PluginSettings("--plugins (or TROMPE_PLUGINS)", "--strict-plugins (or TROMPE_STRICT_PLUGINS=1)")


def _distribution(ep: importlib.metadata.EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "an unknown distribution"


def entry_points_by_name(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    """A group's entry points by name; two distributions claiming one name is an error naming both.

    Without this the later one silently replaces the earlier, e.g. a third-party `draw` hiding the core tools.
    """
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=group):
        seen = found.setdefault(ep.name, ep)
        if _distribution(seen) != _distribution(ep):
            raise PluginConflict(f"plugin name {ep.name!r} ({group}) is claimed by two distributions: "
                                 f"{_distribution(seen)} ({seen.value}) and {_distribution(ep)} ({ep.value}); "
                                 "uninstall the one you do not want (pip uninstall NAME)")
    return found


def plugin_manager(allow: Iterable[str] | None = None, extra: Mapping[str, Any] | None = None,
                   strict: bool | None = None, settings: PluginSettings = PluginSettings()) -> pluggy.PluginManager:
    """A manager holding the entry-point plugins named in `allow` (all when None) plus `extra` objects.

    `allow` falls back to the comma-separated TROMPE_PLUGINS variable. `extra` maps a plugin name to an
    object or module with `@hookimpl` functions, registered as-is: how tests and embedding programs add
    tools without installing a distribution. A plugin that fails to import is skipped with a warning (the
    others serve) unless it was named in `allow` or `strict` (default: TROMPE_STRICT_PLUGINS) is set.
    """
    if allow is None and os.environ.get("TROMPE_PLUGINS"):
        allow = os.environ["TROMPE_PLUGINS"].split(",")
    if strict is None:
        strict = os.environ.get("TROMPE_STRICT_PLUGINS", "") not in ("", "0")
    wanted = None if allow is None else _names(allow)
    entry_points = entry_points_by_name(ENTRY_POINT_GROUP)
    unknown = sorted(wanted - entry_points.keys() - set(extra or {})) if wanted is not None else []
    if unknown:
        raise PluginError(f"unknown plugin(s) {', '.join(unknown)} in {settings.allow}; installed: "
                          f"{', '.join(sorted(entry_points)) or 'none'}")
    pm = pluggy.PluginManager("trompe")
    pm.add_hookspecs(hookspecs)
    for name, ep in entry_points.items():
        if wanted is None or name in wanted:
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken third-party plugin must say which one it is
                problem = f"plugin {name!r} ({ep.value}) failed to import: {type(exc).__name__}: {exc}"
                if strict or wanted is not None:
                    raise PluginError(problem) from exc
                print(f"trompe: skipping {problem}; its tools are unavailable (set {settings.strict} to stop "
                      "instead)", file=sys.stderr)
                continue
            pm.register(plugin, name=name)
    for name, plugin in (extra or {}).items():
        pm.register(plugin, name=name)
    pm.check_pending()
    return pm


def collect_tools(pm: pluggy.PluginManager, tags: Iterable[str] | None = None,
                  settings: PluginSettings = PluginSettings()) -> dict[str, ToolSpec]:
    """Every tool the plugins register, filtered by tag; a name defined twice is an error naming both."""
    tools: dict[str, ToolSpec] = {}
    for impl in pm.hook.register_tools.get_hookimpls():
        impl.function(register=_registrar(tools, impl.plugin_name, settings))
    if tags is not None:
        wanted = _names(tags)
        known = {tag for spec in tools.values() for tag in spec.tags}
        if wanted - known:
            raise PluginError(f"unknown tag(s) {', '.join(sorted(wanted - known))} in --tools/TROMPE_TOOLS; "
                              f"the loaded plugins provide: {', '.join(sorted(known)) or 'none'}")
        tools = {name: spec for name, spec in tools.items() if spec.tags & wanted}
    return dict(sorted(tools.items()))


def _registrar(tools: dict[str, ToolSpec], plugin: str, settings: PluginSettings) -> Callable[..., Any]:
    def register(fn: Callable[..., Any], tags: Iterable[str] = (), name: str | None = None,
                 copies: float = WORK_FACTOR) -> None:
        tool_name = name or fn.__name__
        if not TOOL_NAME.fullmatch(tool_name):
            raise PluginError(f"plugin {plugin!r} registers a tool named {ascii(tool_name)}; tool names must be "
                              "printable ASCII identifiers: a letter, then up to 63 letters, digits or '_'")
        if tool_name in SERVER_TOOLS:
            raise PluginConflict(f"plugin {plugin!r} registers a tool named {tool_name!r}, which is a server tool "
                                 f"(trompe_server's {tool_name}); rename the plugin's tool, or leave the plugin "
                                 f"out with {settings.allow}")
        if not (isinstance(copies, int | float) and 1 <= copies <= MAX_COPIES):
            raise PluginError(f"plugin {plugin!r} registers tool {tool_name!r} with copies={copies!r}; accepted: "
                              f"a number from 1 to {MAX_COPIES} (full-size working copies the tool holds)")
        if tool_name in tools:
            raise PluginConflict(f"tool {tool_name!r} is defined by both plugin {tools[tool_name].plugin!r} "
                                 f"and plugin {plugin!r}; load only one of them with {settings.allow}")
        tools[tool_name] = ToolSpec(tool_name, fn, frozenset(tags), plugin, float(copies))

    return register


def plugin_listing(pm: pluggy.PluginManager) -> list[dict[str, Any]]:
    """Name, distribution, version and tool names of each loaded plugin (and its storage schemes, if it registers
    any), for --list-plugins."""
    dists = {name: ep.dist for name, ep in entry_points_by_name(ENTRY_POINT_GROUP).items()}
    tools = collect_tools(pm)
    storages = storage_factories(pm)
    listing = []
    for name, _plugin in sorted(pm.list_name_plugin()):
        dist = dists.get(name)
        row = {
            "name": name,
            "distribution": dist.name if dist else None,
            "version": dist.version if dist else None,
            "tools": [t for t, spec in tools.items() if spec.plugin == name],
        }
        schemes = [scheme for scheme, (_factory, plugin) in storages.items() if plugin == name]
        listing.append(row | {"storages": schemes} if schemes else row)
    return listing
