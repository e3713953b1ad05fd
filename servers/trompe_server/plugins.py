"""Finding plugins through entry points and collecting the tools they register."""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Callable, Iterable
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginConflict
from .toolapi import ToolSpec

ENTRY_POINT_GROUP = "trompe.tools"


def plugin_manager(allow: Iterable[str] | None = None) -> pluggy.PluginManager:
    """A manager holding the entry-point plugins named in `allow` (all of them when None)."""
    if allow is None and os.environ.get("TROMPE_PLUGINS"):
        allow = os.environ["TROMPE_PLUGINS"].split(",")
    wanted = None if allow is None else {name.strip() for name in allow if name.strip()}
    pm = pluggy.PluginManager("trompe")
    pm.add_hookspecs(hookspecs)
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if (wanted is None or ep.name in wanted) and pm.get_plugin(ep.name) is None:
            pm.register(ep.load(), name=ep.name)
    pm.check_pending()
    return pm


def collect_tools(pm: pluggy.PluginManager, tags: Iterable[str] | None = None) -> dict[str, ToolSpec]:
    """Every tool the plugins register, filtered by tag; a name defined twice is an error naming both."""
    tools: dict[str, ToolSpec] = {}
    for impl in pm.hook.register_tools.get_hookimpls():
        impl.function(register=_registrar(tools, impl.plugin_name))
    if tags is not None:
        wanted = set(tags)
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
    """Name, version and tool names of each loaded plugin, for --list-plugins."""
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
