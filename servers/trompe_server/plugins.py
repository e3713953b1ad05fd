"""Finding plugins through entry points and collecting the tools they register."""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginConflict, PluginError
from .toolapi import ToolSpec

ENTRY_POINT_GROUP = "trompe.tools"


def _names(items: Iterable[str]) -> set[str]:
    return {item.strip() for item in items if item.strip()}


def plugin_manager(allow: Iterable[str] | None = None, extra: Mapping[str, Any] | None = None
                   ) -> pluggy.PluginManager:
    """A manager holding the entry-point plugins named in `allow` (all when None) plus `extra` objects.

    `allow` falls back to the comma-separated TROMPE_PLUGINS variable. `extra` maps a plugin name to an
    object or module with `@hookimpl` functions, registered as-is: how tests and embedding programs add
    tools without installing a distribution.
    """
    if allow is None and os.environ.get("TROMPE_PLUGINS"):
        allow = os.environ["TROMPE_PLUGINS"].split(",")
    wanted = None if allow is None else _names(allow)
    entry_points = {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    unknown = sorted(wanted - entry_points.keys() - set(extra or {})) if wanted is not None else []
    if unknown:
        raise PluginError(f"unknown plugin(s) {', '.join(unknown)} in --plugins/TROMPE_PLUGINS; installed: "
                          f"{', '.join(sorted(entry_points)) or 'none'}")
    pm = pluggy.PluginManager("trompe")
    pm.add_hookspecs(hookspecs)
    for name, ep in entry_points.items():
        if wanted is None or name in wanted:
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken third-party plugin must say which one it is
                raise PluginError(f"plugin {name!r} ({ep.value}) failed to import: "
                                  f"{type(exc).__name__}: {exc}") from exc
            pm.register(plugin, name=name)
    for name, plugin in (extra or {}).items():
        pm.register(plugin, name=name)
    pm.check_pending()
    return pm


def collect_tools(pm: pluggy.PluginManager, tags: Iterable[str] | None = None) -> dict[str, ToolSpec]:
    """Every tool the plugins register, filtered by tag; a name defined twice is an error naming both."""
    tools: dict[str, ToolSpec] = {}
    for impl in pm.hook.register_tools.get_hookimpls():
        impl.function(register=_registrar(tools, impl.plugin_name))
    if tags is not None:
        wanted = _names(tags)
        known = {tag for spec in tools.values() for tag in spec.tags}
        if wanted - known:
            raise PluginError(f"unknown tag(s) {', '.join(sorted(wanted - known))} in --tools/TROMPE_TOOLS; "
                              f"the loaded plugins provide: {', '.join(sorted(known)) or 'none'}")
        tools = {name: spec for name, spec in tools.items() if spec.tags & wanted}
    return dict(sorted(tools.items()))


def _registrar(tools: dict[str, ToolSpec], plugin: str) -> Callable[..., Any]:
    def register(fn: Callable[..., Any], tags: Iterable[str] = (), name: str | None = None) -> None:
        tool_name = name or fn.__name__
        if tool_name in tools:
            raise PluginConflict(f"tool {tool_name!r} is defined by both plugin {tools[tool_name].plugin!r} "
                                 f"and plugin {plugin!r}; disable one with --plugins")
        tools[tool_name] = ToolSpec(tool_name, fn, frozenset(tags), plugin)

    return register


def plugin_listing(pm: pluggy.PluginManager) -> list[dict[str, Any]]:
    """Name, distribution, version and tool names of each loaded plugin, for --list-plugins."""
    dists = {ep.name: ep.dist for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    tools = collect_tools(pm)
    listing = []
    for name, _plugin in sorted(pm.list_name_plugin()):
        dist = dists.get(name)
        listing.append({
            "name": name,
            "distribution": dist.name if dist else None,
            "version": dist.version if dist else None,
            "tools": [t for t, spec in tools.items() if spec.plugin == name],
        })
    return listing
