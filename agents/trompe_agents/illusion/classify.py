"""Model-based routing (the paper's step 1: the model names the question's category), with the regex router as
a hint (`both`) and as the fallback when the model's reply is unusable."""

from __future__ import annotations

from dataclasses import dataclass
from string import Template
from typing import Any

from ..backends.base import Backend
from ..final_answer import AnswerError, parse_answer
from ..messages import ImagePart, Message, TextPart, Usage
from .router import GENERAL, Route, categories, route, tools_of

ROUTERS = ("regex", "model", "both")  # model: the paper's way; regex: no classification request
CLASSIFY_MODES = ("first-turn", "call")  # first-turn: agent prompt + images; call: a short text-only request


@dataclass
class Classification:
    """The routing decision and what the classification request cost."""

    route: Route
    usage: Usage


def category_schema(task: int) -> dict[str, Any]:
    """One of the task's categories, or general."""
    return {"type": "object", "additionalProperties": False, "required": ["category"],
            "properties": {"category": {"type": "string", "enum": [*categories(task), GENERAL]}}}


def classify_text(template: str, task: int, question: str, hint: str) -> str:
    """The classification request: the category names, the regex hint (router `both`) and the question."""
    listing = "\n".join(f"- {name}" for name in categories(task))
    text = Template(template).safe_substitute(categories=listing, hint=hint)
    return f"{text.rstrip()}\n\nQuestion:\n{question}"


async def decide_route(backend: Backend, *, task: int, question: str, router: str, mode: str, system: str,
                       template: str, images: list[ImagePart]) -> Classification:
    """Route by regex, or ask the model (one request); an unusable reply falls back to the regex route."""
    regex = route(question, task)
    if router == "regex":
        return Classification(regex, Usage())
    hint = f"(Hint from a keyword router: '{regex.category}'.)\n" if router == "both" else ""
    if mode == "call":
        messages = [Message("user", [TextPart(classify_text(template, task, question, hint))])]
    else:
        messages = [Message("system", [TextPart(system)]),
                    Message("user", [*images, TextPart(classify_text(template, task, question, hint))])]
    usage, sent = Usage(), {}
    try:
        turn = await backend.complete(messages, [], final_schema=category_schema(task))
        usage, sent = turn.usage, turn.sent
        category = parse_answer(turn.message.text, category_schema(task))["category"]
    except AnswerError as exc:
        return Classification(_fallback(regex, f"unusable classification: {exc}", sent), usage)
    except Exception as exc:  # noqa: BLE001 -- a failed request routes by regex; the agent's own turn reports it
        return Classification(_fallback(regex, f"classification failed: {type(exc).__name__}: {exc}"), usage)
    decided = Route(task, category, tools_of(category, task), regex.matched, regex.score, "model", regex.category,
                    sent=sent)
    return Classification(decided, usage)


def _fallback(regex: Route, note: str, sent: dict | None = None) -> Route:
    regex.source, regex.note, regex.sent = "fallback", note, sent or {}
    return regex
