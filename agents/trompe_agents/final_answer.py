"""Find a JSON answer in whatever a model wrote and check it against the app's schema."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class AnswerError(ValueError):
    """The model's final text holds no JSON object matching the schema; the message says what is wrong."""


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object the text contains: the whole text, code fences, then each {...} in order."""
    found: list[dict[str, Any]] = []
    candidates = [text.strip(), *(m.group(1).strip() for m in FENCE.finditer(text))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) and value not in found:
            found.append(value)
    return found


def parse_answer(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The first JSON object in `text` valid under `schema`; AnswerError says why when there is none."""
    objects = json_objects(text)
    if not objects:
        raise AnswerError("no JSON object found in the reply")
    validator = jsonschema.Draft202012Validator(schema)
    first_error = None
    for value in objects:
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        if not errors:
            return value
        if first_error is None:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "the answer"
            first_error = f"{where}: {errors[0].message}"
    raise AnswerError(first_error)
