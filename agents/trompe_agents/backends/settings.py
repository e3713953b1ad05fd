"""A backend's own settings (`--backend-option KEY=VALUE`) declared as a frozen dataclass of typed, bounded fields,
so a misspelt key or a value out of range is refused before any work, never ignored and recorded as applied.

A backend declares its class with `setting(...)` fields and registers it with its factory
(`register(name, factory, settings=MySettings)`); it reads typed attributes (`MySettings.of(options).device`).
`from_pairs` reads the command line's text; the constructor checks values given from Python the same way.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Self


class SettingError(ValueError):
    """A backend setting the backend does not take, or a value outside what it accepts; the text says which."""


class Default(enum.Enum):
    """A default the backend works out per model (e.g. the catalogue's temperature), not one fixed value."""

    PER_MODEL = "per model"

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


PER_MODEL = Default.PER_MODEL


@dataclass(frozen=True)
class Kind:
    """What one setting accepts: `read` turns command-line text or a Python value into the typed value, or raises
    ValueError; `accepted` says the range in words (error lines and docs/vendors.md)."""

    accepted: str
    read: Callable[[Any], Any]


def _none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null"))


def number(low: float, high: float | None = None, *, whole: bool = False, unit: str = "",
           none: str = "") -> Kind:
    """A number in [low, high] (`whole`: an integer); `none` says what None means where None is accepted."""
    what = f"a {'whole ' if whole else ''}number{f' of {unit}' if unit else ''}"
    accepted = f"{what} from {low:g} to {high:g}" if high is not None else f"{what} >= {low:g}"
    if none:
        accepted += f", or none ({none})"

    def read(value: Any) -> Any:
        if none and _none(value):
            return None
        if isinstance(value, str):
            try:
                value = int(value) if whole else float(value)
            except ValueError:
                raise ValueError(accepted) from None
        if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not isinstance(value, int)) \
                or not math.isfinite(value) or value < low or (high is not None and value > high):
            raise ValueError(accepted)
        return value if whole else float(value)

    return Kind(accepted, read)


_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError("true or false")


FLAG = Kind("true or false", _flag)


def text(choices: Iterable[str] = (), what: str = "text", pattern: str = "") -> Kind:
    """A string, one of `choices` where there are some, matching `pattern` where one is given."""
    allowed = tuple(choices)
    accepted = ", ".join(allowed) if allowed else what

    def read(value: Any) -> Any:
        if not isinstance(value, str) or not value or (allowed and value not in allowed) \
                or (pattern and not re.fullmatch(pattern, value)):
            raise ValueError(accepted)
        return value

    return Kind(accepted, read)


def _object(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("a JSON object") from None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError("a JSON object")
    return dict(value)


JSON_OBJECT = Kind("a JSON object, e.g. {\"top_k\": 1}", _object)


def python_only(what: str, instead: str) -> Kind:
    """A callable, which only Python can give; on the command line `instead` says what to use."""

    def read(value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError(f"{what}, set from Python only; on the command line use {instead}")
        if not callable(value):
            raise ValueError(what)
        return value

    return Kind(f"{what} (from Python; on the command line {instead})", read)


def setting(default: Any, kind: Kind, help: str, shown: str = "") -> Any:
    """One declared setting: its default (`shown`: what it means, where the value does not say), what it accepts
    and what it does (docs/vendors.md lists them)."""
    return dataclasses.field(default=default, metadata={"kind": kind, "help": help, "shown": shown})


@dataclass(frozen=True)
class BackendSettings:
    """Base of every backend's settings class; with no fields of its own it takes no `--backend-option`."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            if "kind" not in field.metadata:
                raise TypeError(f"{type(self).__name__}.{field.name}: declare it with setting(default, kind, help)")
            value = getattr(self, field.name)
            if value is field.default:
                continue
            try:
                object.__setattr__(self, field.name, field.metadata["kind"].read(value))
            except ValueError as exc:
                raise SettingError(f"{field.name}={_shown(value)}: expected {exc}") from None

    @classmethod
    def names(cls) -> list[str]:
        return sorted(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, Any]] | Mapping[str, Any], backend: str = "this backend") -> Self:
        """The settings from KEY=VALUE pairs (text from the command line, or Python values); the last of a key wins.
        An unknown key is refused naming the accepted ones (and the nearest, if one is close)."""
        given = dict(pairs.items() if isinstance(pairs, Mapping) else pairs)
        names = cls.names()
        for key in given:
            if key not in names:
                raise SettingError(unknown(key, names, backend))
        return cls(**given)

    @classmethod
    def of(cls, options: Any, exactly: bool = False) -> Self:
        """The settings in `options` (a BackendOptions), of this class (`exactly`: not a subclass, whose settings
        of its own would go unread); none given: the defaults."""
        settings = options.settings
        if settings is None:
            return cls()
        if not isinstance(settings, cls) or (exactly and type(settings) is not cls):
            raise SettingError(f"expected {cls.__name__} settings, got {type(settings).__name__}")
        return settings

    def changed(self) -> dict[str, Any]:
        """The settings that differ from their defaults, as JSON values: what a run's fingerprint records."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default}

    @classmethod
    def describe(cls) -> list[dict[str, str]]:
        """One row per setting: name, what it accepts, its default and what it does."""
        return [{"name": f.name, "accepts": f.metadata["kind"].accepted,
                 "default": f.metadata["shown"] or _default(f.default),
                 "help": f.metadata["help"]} for f in sorted(dataclasses.fields(cls), key=lambda f: f.name)]


def unknown(key: str, names: list[str], backend: str) -> str:
    """The line for a key no setting has: what the backend takes, and the nearest name if one is close."""
    near = difflib.get_close_matches(key, names, n=1)
    hint = f" (did you mean {near[0]}?)" if near else ""
    takes = f"it takes {', '.join(names)}" if names else "it takes none"
    return f"{key}: {backend} has no such setting{hint}; {takes}"


def _default(value: Any) -> str:
    return value.value if isinstance(value, Default) else f"`{json.dumps(value)}`"


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def settings_table(classes: Mapping[str, type[BackendSettings]]) -> str:
    """A markdown table of every backend's settings, one row per setting the backends share (docs/vendors.md holds
    it; a test checks they agree)."""
    rows: dict[tuple[str, ...], list[str]] = {}
    for backend, cls in classes.items():
        for row in cls.describe() or [{"name": "", "accepts": "", "default": "", "help": "takes none"}]:
            rows.setdefault(tuple(row.values()), []).append(backend)
    lines = ["| `--backend` | setting | accepts | default | what it does |", "|---|---|---|---|---|"]
    for (name, accepts, default, help), backends in sorted(rows.items(), key=lambda r: (r[1], r[0])):
        shown = f"`{name}`" if name else ""
        lines.append(f"| {', '.join(backends)} | {shown} | {accepts} | {default} | {help} |")
    return "\n".join(lines) + "\n"
