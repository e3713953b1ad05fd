"""What the plugins registered through one hook, by name, each with the plugin that registered it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .errors import PluginConflict

REMEDY = "leave one out with {allow}, or uninstall its distribution (pip uninstall NAME)"


class PluginRegistry(Mapping[Any, Any]):
    """name -> thing for one kind (`what`: 'backend', 'tool', ...); a name registered twice is refused naming both
    plugins, so a third-party `claude` or `crop` never silently replaces the built-in one (nor the other way)."""

    def __init__(self, what: str, allow: str):
        self.what, self.allow = what, allow  # allow: how the running command spells its allow-list
        self._things: dict[Any, Any] = {}
        self.owners: dict[Any, str] = {}  # name -> the plugin that registered it

    def add(self, name: Any, thing: Any, plugin: str) -> None:
        if name in self.owners:
            first, second = sorted((self.owners[name], plugin))
            raise PluginConflict(f"{self.what} {name!r} is registered by both plugin {first!r} and plugin "
                                 f"{second!r}; {REMEDY.format(allow=self.allow)}")
        self._things[name], self.owners[name] = thing, plugin

    def of(self, plugin: str) -> list[Any]:
        """The names `plugin` registered, sorted."""
        return sorted(name for name, owner in self.owners.items() if owner == plugin)

    def __getitem__(self, name: Any) -> Any:
        return self._things[name]

    def __iter__(self) -> Iterator[Any]:
        return iter(sorted(self._things))

    def __len__(self) -> int:
        return len(self._things)
