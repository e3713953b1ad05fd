"""The tools the plugins register (hook `register_tools`, trompe_kernel), checked and collected for one server."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from trompe_kernel.errors import PluginConflict, PluginError
from trompe_kernel.manager import PluginSettings, Plugins
from trompe_kernel.registry import PluginRegistry

from .admission import WORK_FACTOR
from .storages import storage_factories
from .toolapi import ToolSpec

SERVER_TOOLS = ("open_session", "add_image", "list_images", "view_image", "close_session")  # the server's own
MAX_COPIES = 64  # above any real tool; keeps a typo from making every call wait for the whole budget
TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")  # printable ASCII: no lookalikes, nothing invisible
SERVER_SETTINGS = PluginSettings("--plugins (or TROMPE_PLUGINS)", "--strict-plugins (or TROMPE_STRICT_PLUGINS=1)")


def _names(items: Iterable[str]) -> set[str]:
    return {item.strip() for item in items if item.strip()}


def collect_tools(plugins: Plugins, tags: Iterable[str] | None = None) -> dict[str, ToolSpec]:
    """Every tool the plugins register, filtered by tag; a name defined twice is an error naming both."""
    tools = PluginRegistry("tool", plugins.settings.allow)
    for impl in plugins.implementations("register_tools"):
        impl.function(register=_registrar(tools, impl.plugin_name, plugins.settings))
    found: dict[str, ToolSpec] = dict(tools)
    if tags is not None:
        wanted = _names(tags)
        known = {tag for spec in found.values() for tag in spec.tags}
        if wanted - known:
            raise PluginError(f"unknown tag(s) {', '.join(sorted(wanted - known))} in --tools/TROMPE_TOOLS; "
                              f"the loaded plugins provide: {', '.join(sorted(known)) or 'none'}")
        found = {name: spec for name, spec in found.items() if spec.tags & wanted}
    return found


def _registrar(tools: PluginRegistry, plugin: str, settings: PluginSettings) -> Callable[..., Any]:
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
        tools.add(tool_name, ToolSpec(tool_name, fn, frozenset(tags), plugin, float(copies)), plugin)

    return register


def plugin_listing(plugins: Plugins) -> list[dict[str, Any]]:
    """Name, distribution, version and tool names of each plugin the server loaded (and its storage schemes, if it
    registers any), for --list-plugins."""
    tools = collect_tools(plugins)
    storages = storage_factories(plugins)
    listing = []
    for name in plugins.names():
        dist, version = plugins.distribution(name) or (None, None)
        row = {"name": name, "distribution": dist, "version": version,
               "tools": [t for t, spec in tools.items() if spec.plugin == name]}
        schemes = storages.of(name)
        listing.append(row | {"storages": schemes} if schemes else row)
    return listing
