"""Tool arguments refused before a tool runs, in the project's style: the argument, then what is accepted."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

KINDS = {"float": "a number", "int": "a whole number", "string": "text", "list": "a list", "bool": "true or false",
         "dict": "an object"}
SCHEMA_KINDS = {"number": "a number", "integer": "a whole number", "string": "text", "boolean": "true or false",
                "object": "an object", "array": "a list"}

ITEM_WORDS = {"number": "numbers", "integer": "whole numbers", "string": "strings", "boolean": "true/false values",
              "object": "objects", "array": "lists"}


def _path(loc: tuple[Any, ...]) -> str:
    """('points', 0, 1) -> 'points[0][1]', the way a caller would index the argument."""
    head, *rest = loc or ("arguments",)
    return str(head) + "".join(f"[{part}]" for part in rest)


def _non_finite(value: Any, loc: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], float]]:
    if isinstance(value, float) and not math.isfinite(value):
        yield loc, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, (*loc, key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _non_finite(item, (*loc, index))


def accepted(schema: dict[str, Any] | None) -> str:
    """What a JSON-schema property accepts, in words: 'a number from 1 to 8', 'a list of 4 numbers (...)'."""
    if not schema:
        return "see the tool's description"
    kind = SCHEMA_KINDS.get(schema.get("type"), "a value")
    if "enum" in schema:
        *most, last = [repr(v) for v in schema["enum"]]
        kind = "one of " + (f"{', '.join(most)} or {last}" if most else last)
    elif schema.get("type") == "array":
        low, high = schema.get("minItems"), schema.get("maxItems")
        count = f"{low} " if low is not None and low == high else (
            f"{low or 0} to {high} " if high is not None else (f"at least {low} " if low else ""))
        kind = f"a list of {count}{ITEM_WORDS.get((schema.get('items') or {}).get('type'), 'values')}"
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is not None and high is not None:
        kind += f" from {low:g} to {high:g}"
    elif low is not None:
        kind += f" of at least {low:g}"
    elif high is not None:
        kind += f" of at most {high:g}"
    description = schema.get("description")
    return f"{kind} ({description})" if description else kind


def _problem(error: dict[str, Any]) -> str:
    kind, given = error["type"], error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "missing"
    if kind in ("too_short", "too_long"):
        count = ctx.get("actual_length", len(given) if hasattr(given, "__len__") else "?")
        bound = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        if kind == "too_short":
            return f"has {count} items, needs at least {bound} item{'s' * (bound != 1)}"
        return f"has {count} items, at most {bound} allowed"
    if kind == "finite_number":
        return f"{given} is not a finite number"
    if kind.startswith(("greater_than", "less_than", "multiple_of")):
        return f"{given!r} is out of range"
    base = kind.split("_")[0]
    if kind == "literal_error":
        return f"{given!r} is not one of {ctx.get('expected', 'the listed values')}"
    if base in KINDS:
        return f"{given!r} is not {KINDS[base]}"
    return error["msg"][0].lower() + error["msg"][1:]


def describe_validation(tool: str, exc: ValidationError, schema: dict[str, Any]) -> str:
    """One line naming the first bad argument and what it accepts (plus how many others were wrong)."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    props = schema.get("properties", {})
    name = first["loc"][0] if first["loc"] else None
    more = f" (and {len(errors) - 1} more argument error{'s' * (len(errors) > 2)})" if len(errors) > 1 else ""
    return (f"Error executing tool {tool}: {_path(first['loc'])}: {_problem(first)}; "
            f"accepted: {accepted(props.get(name))}{more}")


def describe_non_finite(tool: str, arguments: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """NaN, Infinity or 1e309 anywhere in the arguments (JSON parsers accept them), or None when all are finite."""
    for loc, value in _non_finite(arguments, ()):
        props = schema.get("properties", {})
        return (f"Error executing tool {tool}: {_path(loc)}: {value} is not a finite number; "
                f"accepted: {accepted(props.get(loc[0]))}")
    return None
