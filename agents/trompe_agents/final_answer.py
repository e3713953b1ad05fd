"""Find a JSON answer in whatever a model wrote and check it against the app's schema."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from .replies import AnswerError, check_size, integer_text, tag_contents

FENCE = "```"  # a Markdown code fence; an opening one may name json (or JSON)
LETTERS = "ABCDEFGH"  # as many letters as an item has options; IllusionVQA items have up to 8
BINARY = {"1": "yes", "true": "yes", "0": "no", "false": "no"}
INSTRUCTIONS = re.compile(r"\n[^\n]*answer instructions?\s*:.*\Z", re.IGNORECASE | re.DOTALL)
TAG_LINE = re.compile(r"</?(?:answer|reasons)>", re.IGNORECASE)
# Answer patterns of the non-option answer types (datasets/answer_types.py); simple enough for vendors' schemas.
INTEGER, PAIR, LETTER, SHORT = "^-?[0-9]+$", "^[0-9]+,[0-9]+$", "^[A-Za-z0-9]$", "^[^\\n]{1,80}$"
# Where a JSON object can start: '{', then '}' or a string key and its colon; other '{' are not decoded at all.
# Linear: a key's closing quote ends the look of only the one '{' before its opening quote.
OBJECT_START = re.compile(r'\{(?=\s*(?:\}|"(?:[^"\\]|\\.)*"\s*:))', re.DOTALL)
# Characters the search for embedded objects may decode, per character of the reply: a normal reply's objects are
# decoded a few times over (each nested one again); a reply built to make every start decode to its end (nested
# or unclosed) stops being searched there instead of costing seconds.
JSON_SCAN_FACTOR = 16
OPENERS, CLOSERS, QUOTES = ("\\boxed{", "\\box{", "{", "(", "["), ("}", ")", "]"), ("'", '"', "*")


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


def fenced(text: str) -> list[str]:
    """What each code fence holds, stripped (an opening ```json names its language), found in one pass: what
    the pattern ```(?:json|JSON)?\\s*\\n?(.*?)``` found, without its quadratic backtracking on whitespace."""
    found: list[str] = []
    start = text.find(FENCE)
    while start >= 0:
        body = start + len(FENCE)
        body += 4 if text.startswith(("json", "JSON"), body) else 0
        end = text.find(FENCE, body)
        if end < 0:
            break
        found.append(text[body:end].strip())
        start = text.find(FENCE, end + len(FENCE))
    return found


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object the text contains: the whole text, code fences, then each {...} in order (each
    distinct object once, compared as JSON text: the first valid one is the answer, so repeats change nothing but
    the cost), until JSON_SCAN_FACTOR characters per character of the text have been decoded."""
    found: list[dict[str, Any]] = []
    for candidate in [text.strip(), *fenced(text)]:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):  # nesting deeper than the interpreter's limit is no answer
            continue
        if isinstance(value, dict):
            found.append(value)
    seen = {_key(v) for v in found}
    decoder = json.JSONDecoder()
    budget = JSON_SCAN_FACTOR * max(len(text), 4096)
    for match in OBJECT_START.finditer(text):
        if budget <= 0:
            break
        start = match.start()
        try:
            value, end = decoder.raw_decode(text, start)
            budget -= end - start
        except json.JSONDecodeError as exc:
            budget -= exc.pos - start + 1
            continue
        except (ValueError, RecursionError):  # too deep, or a number of 4,300+ digits: charged to the end
            budget -= len(text) - start
            continue
        if isinstance(value, dict) and (key := _key(value)) not in seen:
            seen.add(key)
            found.append(value)
    return found


def _key(value: dict[str, Any]) -> str:
    """An object as hashable text, so repeats are found in a set (comparing each to all found was quadratic)."""
    return json.dumps(value, sort_keys=True)


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


def reformat(value: Any, pattern: str) -> Any:
    """`value` written in a pattern's canonical form when it plainly means one: 3 or "{3}" -> "3",
    "rows={5} columns={6}" or "(5, 6)" -> "5,6", "\\box{EJ}" -> "EJ"; else as given (the schema then refuses it)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return value
    text = str(value).strip()
    if pattern in (LETTER, SHORT):
        inner = unwrapped(text).strip()
        return inner if inner and re.fullmatch(pattern, inner) else text
    if re.fullmatch(pattern, text):
        return text
    numbers = re.findall(r"-?\d+", text)
    words = re.sub(r"(?i)\b(?:rows?|columns?|and|by|x)\b", "", text)
    if pattern == INTEGER and len(numbers) == 1 and not re.search(r"[A-Za-z]{2,}", words):
        return integer_text(numbers[0]) or text
    if pattern == PAIR and len(numbers) == 2 and not re.search(r"[A-Za-z]{2,}", words):
        pair = [integer_text(n.lstrip("-")) for n in numbers]
        return ",".join(pair) if all(pair) else text
    return text


def unwrapped(text: str) -> str:
    """`text` without one wrapper: `{x}`, `(x)`, `[x]`, `\\box{x}`, quotes or stars, a final full stop; in
    one pass, where the equivalent pattern backtracked for minutes on a few hundred spaces."""
    inner = text.lstrip()
    inner = inner[len(next((o for o in OPENERS if inner.startswith(o)), "")):].lstrip()
    inner = inner[1:] if inner[:1] in QUOTES else inner
    inner = inner.rstrip()
    inner = inner[:-1].rstrip() if inner[-1:] in (".", "!") else inner
    inner = inner[:-1].rstrip() if inner[-1:] in CLOSERS else inner
    return inner[:-1] if inner[-1:] in QUOTES else inner


def coerced(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """`value` with each enum property spelled as the schema spells it, and each patterned one in its form."""
    props = schema.get("properties", {})
    out = {}
    for key, item in value.items():
        prop = props.get(key, {})
        out[key] = (coerce(item, prop["enum"]) if "enum" in prop
                    else reformat(item, prop["pattern"]) if "pattern" in prop else item)
    return out


def tagged_answer(text: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """A reply in a dataset's own tag format (<reasons>..</reasons><answer>..</answer>), read as the answer."""
    props = schema.get("properties", {})
    found = {k: tag_contents(text, k) for k in props if k in ("answer", "reasons")}
    if not found.get("answer"):
        return None
    return {k: (v[-1] if v else "") for k, v in found.items()}


def parse_answer(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The first JSON object in `text` valid under `schema` (or the dataset's own answer tags); AnswerError says
    why when there is none, ReplyTooLong (an AnswerError) when `text` is over MAX_REPLY_CHARS."""
    check_size(text)
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
