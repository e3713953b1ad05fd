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
BOUNDS = (("minimum", "at least"), ("exclusiveMinimum", "more than"), ("maximum", "at most"),
          ("exclusiveMaximum", "less than"))


def _path(loc: tuple[Any, ...]) -> str:
    """('points', 0, 1) -> 'points[0][1]', the way a caller would index the argument."""
    head, *rest = loc
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
    types = [option for option in schema.get("anyOf", ()) if option.get("type") != "null"]
    if len(types) == 1:  # an optional argument (X | None): what X accepts
        schema = {**types[0], **schema}
    kind = SCHEMA_KINDS.get(schema.get("type"), "a value")
    if choices := schema.get("enum", [schema["const"]] if "const" in schema else []):  # Literal[...] of 2+ or 1
        *most, last = [repr(v) for v in choices]
        kind = f"one of {', '.join(most)} or {last}" if most else last
    elif schema.get("type") == "array":
        low, high = schema.get("minItems"), schema.get("maxItems")
        count = f"{low} " if low is not None and low == high else (
            f"{low or 0} to {high} " if high is not None else (f"at least {low} " if low else ""))
        kind = f"a list of {count}{ITEM_WORDS.get((schema.get('items') or {}).get('type'), 'values')}"
    if "minimum" in schema and "maximum" in schema:
        kind += f" from {schema['minimum']:g} to {schema['maximum']:g}"
    elif bounds := [f"{word} {schema[key]:g}" for key, word in BOUNDS if key in schema]:
        kind += " of " + " and ".join(bounds)
    description = schema.get("description")
    return f"{kind} ({description})" if description else kind


def _problem(error: dict[str, Any]) -> str:
    """What is wrong with one argument, in words: 'missing', "'big' is not a number", 'has 3 items, ...'."""
    kind, given = error["type"], error.get("input")
    if kind == "missing":
        return "missing"
    if kind == "too_short":
        return f"has {_items(error['ctx']['actual_length'])}, needs at least {_items(error['ctx']['min_length'])}"
    if kind == "too_long":
        return f"has {_items(error['ctx']['actual_length'])}, at most {error['ctx']['max_length']} allowed"
    if kind == "finite_number":
        return f"{given} is not a finite number"
    if kind.startswith(("greater_than", "less_than")):
        return f"{given!r} is out of range"
    base = kind.split("_")[0]
    if kind == "literal_error":
        return f"{given!r} is not one of {error['ctx']['expected']}"
    if base in KINDS:
        return f"{given!r} is not {KINDS[base]}"
    return error["msg"][0].lower() + error["msg"][1:]


def _items(count: int) -> str:
    """'1 item', '4 items': a count as a person writes it."""
    return f"{count} item{'s' * (count != 1)}"


def describe_validation(tool: str, exc: ValidationError, schema: dict[str, Any]) -> str:
    """One line naming the first bad argument and what it accepts (plus how many others were wrong)."""
    errors = exc.errors()
    first = errors[0]
    name = first["loc"][0]
    more = f" (and {len(errors) - 1} more argument error{'s' * (len(errors) > 2)})" if len(errors) > 1 else ""
    return (f"Error executing tool {tool}: {_path(first['loc'])}: {_problem(first)}; "
            f"accepted: {accepted(schema['properties'].get(name))}{more}")


def describe_non_finite(tool: str, arguments: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """NaN, Infinity or 1e309 anywhere in the arguments (JSON parsers accept them), or None when all are finite."""
    for loc, value in _non_finite(arguments, ()):
        return (f"Error executing tool {tool}: {_path(loc)}: {value} is not a finite number; "
                f"accepted: {accepted(schema['properties'].get(loc[0]))}")
    return None
