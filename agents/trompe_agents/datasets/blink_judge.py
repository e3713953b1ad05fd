"""BLINK's model matcher as an opt-in fallback, through any configured backend.

The official pipeline (zeyofu/BLINK_Benchmark eval/multiple_choice.py `match_multiple_choice`, commit 2d6a779)
asks gpt-3.5-turbo at temperature 0 which option an answer selects, "(Z)" when it refuses or selects none, for
replies its token rule cannot read. `blink_match.match` reads most of those without a model; `judge_unread`
sends only the replies it still finds no option in ("no option") to the judge, in our own wording of that
request, and returns the letter per record id (None for "(Z)" or an unreadable verdict).
"""

from __future__ import annotations

import re
from typing import Any

from ..backends.base import Backend
from ..messages import Message, TextPart
from . import blink_match

LETTERS = "ABCDE"
VERDICT = re.compile(r"\(([A-EZ])\)")


def judge_prompt(question: str, choices: list[str], reply: str) -> str:
    """One request: the question, its lettered options plus (Z), the answer, and the one-token verdict asked."""
    options = "\n".join(f"({letter}) {text}" for letter, text in zip(LETTERS, choices))
    return ("Match an answer to the option of a single-choice question that it selects. Reply with the option "
            "only, for example (B). Reply (Z) if the answer refuses, selects no option, or means none of them.\n\n"
            f"Question: {question}\nOptions:\n{options}\n(Z) none\nAnswer: {reply}\nOption:")


def verdict(text: str, count: int) -> str | None:
    """The judge's option, "(B)"; None for (Z), a letter beyond the options, or no verdict."""
    found = VERDICT.findall(text or "")
    letter = found[0] if found else None
    return f"({letter})" if letter and letter in LETTERS[:count] else None


async def judge_one(backend: Backend, question: str, choices: list[str], reply: str) -> str | None:
    turn = await backend.complete([Message("user", [TextPart(judge_prompt(question, choices, reply))])], [],
                                  max_output_tokens=16)
    return verdict(turn.message.text, len(choices))


async def judge_unread(backend: Backend, records: list[dict[str, Any]], reply) -> dict[str, str | None]:
    """Per record id, the judge's option for each labelled reply the deterministic matcher reads no option in.

    `reply(record)` is the text the scorer reads (scorers.reply)."""
    judged: dict[str, str | None] = {}
    for record in records:
        text, choices = reply(record), record.get("choices") or []
        if record.get("label") is None or not text or not choices:
            continue
        if blink_match.match(text, choices).rule == "no option":
            judged[str(record["id"])] = await judge_one(backend, str(record.get("question") or ""), choices, text)
    return judged
