"""BLINK's answer extraction, deterministic: the official token rule, then a matcher that reads what models write.

The official pipeline (zeyofu/BLINK_Benchmark eval/test_benchmark.py `analyze_answer`, commit 63137e4) takes a
reply that is exactly "A".."E" or "(A)".."(E)"; else the bracketed option tokens among the reply's
whitespace-separated words, preferring its last paragraph's when that holds exactly one; and when neither holds
exactly one, asks gpt-3.5-turbo (eval/multiple_choice.py `build_prompt`) which option the answer selects, "(Z)"
when it refuses or selects none. `match` keeps the token rule and replaces the model call with rules for what
that matcher reads in saved replies (eval/saved_outputs): a leading `<s>`, unbracketed letters named as an answer
("Point B is closer", "Box A", "option C", "The correct answer is C."), a reply that is one letter in any case
("b", "Option: c."), and option texts ("the third image").
Each result says which rule decided, so a judged fallback can be told apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BRACKETED = ["(A)", "(B)", "(C)", "(D)", "(E)"]
STRAY = re.compile(r"^\s*(?:<s>|</s>|<\|[a-z_]+\|>|\s)+|(?:</s>|<\|[a-z_]+\|>)\s*$")
REFUSAL = re.compile(r"(?i)\b(?:i'?m sorry|i am sorry|i cannot|i can't|cannot (?:determine|be determined|assist)|"
                     r"not possible to (?:determine|tell)|unable to (?:determine|tell))\b")
_LETTER = r"[\"'(*]*([A-E])(?![A-Za-z'’-])[\"')*]*"
ANSWERED = [  # an answer stated as such, strongest first; the last such statement wins
    re.compile(r"(?i:\b(?:correct|final|right|best)\s+(?:answer|option|choice)\s*(?:is|would be|:)\s*(?:option\s+)?)"
               + _LETTER),
    re.compile(r"(?i:\banswer\s*(?:is|would be|:)\s*(?:option\s+|point\s+|box\s+)?)" + _LETTER),
]
NAMED = re.compile(r"(?i:\b(?:point|box|option|choice|image|picture|circle)\s+)" + _LETTER)
BARE = re.compile(r"(?i)^\W*(?:(?:option|choice|answer)\s*[:\-]?\s*)?\(?([a-e])\)?\W*$")  # "b", "Option: c."
LEADING = re.compile(r"^[\"'(*]*([A-E])(?:[\"').:*]|\s+(?:is|are|has|would|seems|appears|looks|shows|more|\()\b|$)")


@dataclass(frozen=True)
class Match:
    """The option letter "(A)".. a reply selects (None: none, the official "(Z)") and the rule that decided."""

    prediction: str | None
    rule: str


def token_rule(reply: str, letters: int) -> str | None:
    """The official token rule alone; None where the official pipeline would ask its model."""
    options = BRACKETED[:letters]
    words = set(reply.split())
    anywhere = [o for o in options if o in words]
    last = [o for o in options if o in set(reply.split("\n\n")[-1].split())]
    if reply in ("A", "B", "C", "D", "E"):
        return f"({reply})"
    if reply in BRACKETED:
        return reply
    if (len(anywhere) != 1 and len(last) != 1) or not anywhere:
        return None
    return last[0] if len(last) == 1 else anywhere[0]


def _one(letters: list[str]) -> str | None:
    return letters[0] if len(set(letters)) == 1 else None


def _by_text(reply: str, choices: list[str]) -> str | None:
    """The one option whose text the reply states (longest texts first, so "Point AB" is not "Point A")."""
    lowered = reply.lower()
    found = {i for i, text in enumerate(choices) if len(text.strip()) > 1
             and re.search(r"(?<![a-z0-9])" + re.escape(text.strip().lower()) + r"(?![a-z0-9])", lowered)}
    nested = {i for i in found for j in found if i != j and choices[i].lower() in choices[j].lower()}
    found -= nested
    return "ABCDE"[found.pop()] if len(found) == 1 else None


def match(reply: str | None, choices: list[str] | None = None, letters: int | None = None) -> Match:
    """The option a BLINK reply selects, read as the official token rule and then its matcher would."""
    count = letters or (len(choices) if choices else 5)
    if not reply or not reply.strip():
        return Match(None, "empty")
    official = token_rule(reply, count)
    if official is not None:
        return Match(official, "token")
    text = STRAY.sub("", reply).strip()
    if (stripped := token_rule(text, count)) is not None:
        return Match(stripped, "token after stray tokens")
    valid = "ABCDE"[:count]
    if (bare := BARE.match(text)) and bare.group(1).upper() in valid:  # the reply is one letter, in any case
        return Match(f"({bare.group(1).upper()})", "bare letter")
    for pattern in ANSWERED:
        stated = [m.group(1) for m in pattern.finditer(text) if m.group(1) in valid]
        if stated:
            return Match(f"({stated[-1]})", "stated answer")
    if (m := LEADING.match(text)) and m.group(1) in valid:
        return Match(f"({m.group(1)})", "leading letter")
    first = re.split(r"(?<=[.!?])\s+|\n", text, maxsplit=1)[0]
    for where, part in (("first sentence", first), ("last paragraph", text.split("\n\n")[-1]), ("reply", text)):
        named = _one([m.group(1) for m in NAMED.finditer(part) if m.group(1) in valid])
        if named:
            return Match(f"({named})", f"named letter, {where}")
    if choices and (by_text := _by_text(first, choices) or _by_text(text, choices)):
        return Match(f"({by_text})", "option text")
    if REFUSAL.search(text):
        return Match(None, "refusal")
    return Match(None, "no option")
