"""BLINK's model matcher: the request and the reading of its verdict (sent by judges.py, `--judge-backend`).

The official pipeline (zeyofu/BLINK_Benchmark eval/multiple_choice.py `match_multiple_choice`, commit 2d6a779)
asks gpt-3.5-turbo at temperature 0 which option an answer selects, "(Z)" when it refuses or selects none, for
replies its token rule cannot read. `blink_match.match` reads most of those without a model; only the replies
it still finds no option in ("no option") go to the judge, in our own wording of that request.
"""

from __future__ import annotations

import re

LETTERS = "ABCDE"
NONE = "(Z)"  # no option: read by no rule, so the item is wrong
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
