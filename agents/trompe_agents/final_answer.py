"""Find a JSON answer in whatever a model wrote and check it against the app's schema."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
LETTERS = "ABCDEFGH"  # as many letters as an item has options; IllusionVQA items have up to 8
TAG = r"<{0}>\s*(.*?)\s*</{0}>"  # a dataset's own answer format, e.g. DataCV Task I <answer>1</answer>
BINARY = {"1": "yes", "true": "yes", "0": "no", "false": "no"}
INSTRUCTIONS = re.compile(r"\n[^\n]*answer instructions?\s*:.*\Z", re.IGNORECASE | re.DOTALL)
TAG_LINE = re.compile(r"</?(?:answer|reasons)>", re.IGNORECASE)


def without_format_instructions(question: str) -> str:
    """A dataset question without its own answer-format instructions (DataCV Task I asks for <answer>1|0</answer>),
    so the model is told one format: the agent's JSON (replies in the dataset's tags are still accepted)."""
    text = INSTRUCTIONS.sub("", question)
    return "\n".join(line for line in text.splitlines() if not TAG_LINE.search(line)).strip()


def option_letters(count: int) -> list[str]:
    """The letters of an item's options: A-C for three options, up to A-H."""
    if not 1 <= count <= len(LETTERS):
        raise ValueError(f"choices: an item needs 1 to {len(LETTERS)} options (A-{LETTERS[-1]}), got {count}")
    return list(LETTERS[:count])


def choice_schema(allowed: list[str]) -> dict[str, Any]:
    """The final answer: reasons first (so models reason before committing), then one of `allowed`."""
    return {"type": "object", "additionalProperties": False, "required": ["reasons", "answer"],
            "properties": {"reasons": {"type": "string"}, "answer": {"type": "string", "enum": list(allowed)}}}


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


def coerce(value: Any, allowed: list[Any]) -> Any:
    """`value` spelled as one of `allowed` when it plainly means it ('Yes', '(B)', '1' for yes), else as given."""
    if not isinstance(value, str) or value in allowed:
        return value
    plain = value.strip().strip("().*").strip()
    by_lower = {str(a).lower(): a for a in allowed}
    if plain.lower() in by_lower:
        return by_lower[plain.lower()]
    if set(by_lower) == {"yes", "no"} and plain.lower() in BINARY:
        return by_lower[BINARY[plain.lower()]]
    return value


def coerced(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """`value` with each enum property spelled as the schema spells it."""
    props = schema.get("properties", {})
    return {k: coerce(v, props[k]["enum"]) if "enum" in props.get(k, {}) else v for k, v in value.items()}


def tagged_answer(text: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """A reply in a dataset's own tag format (<reasons>..</reasons><answer>..</answer>), read as the answer."""
    props = schema.get("properties", {})
    found = {k: re.findall(TAG.format(re.escape(k)), text, re.DOTALL | re.IGNORECASE) for k in props}
    if not found.get("answer"):
        return None
    return {k: (v[-1] if v else "") for k, v in found.items() if k in ("answer", "reasons")}


def parse_answer(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The first JSON object in `text` valid under `schema` (or the dataset's own answer tags); AnswerError says
    why when there is none."""
    objects = [coerced(o, schema) for o in json_objects(text)]
    tagged = tagged_answer(text, schema)
    if tagged is not None:
        objects.append(coerced(tagged, schema))
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
