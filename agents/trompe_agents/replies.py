"""Reading what a model wrote in bounded time: a size cap, answer tags found in one forward pass, numbers read
with a length cap.

Every reply the agent loop or SEVEX parses goes through here first. A pattern such as `<answer>\\s*(.*?)\\s*</answer>`
backtracks cubically on a run of whitespace (2,000 spaces took 12.6 s), and `int()` refuses more than 4,300
digits (Python's limit against quadratic conversion); one hostile or broken reply must cost its own sample,
never the run.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .failures import ErrorKind

# The longest reply (characters) the agent or SEVEX parses: six times what the 4,096-token default output budget
# of a turn holds (~4 characters a token), far beyond any answer; a longer one fails its sample as reply_too_long.
MAX_REPLY_CHARS = 100_000
MAX_NUMBER_DIGITS = 64  # a count or coordinate with more digits is not read as a number
REPLY_TOO_LONG = ErrorKind.REPLY_TOO_LONG  # the error kind of a reply over MAX_REPLY_CHARS (fatal)


class AnswerError(ValueError):
    """The model's final text holds no JSON object matching the schema; the message says what is wrong."""


class ReplyTooLong(AnswerError):
    """A reply longer than MAX_REPLY_CHARS: refused before any parsing, and recorded as its own failure kind."""

    kind = REPLY_TOO_LONG


def check_size(text: str, what: str = "reply") -> str:
    """`text` itself when it is within MAX_REPLY_CHARS; ReplyTooLong (naming the size and the cap) otherwise."""
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyTooLong(f"the {what} is {len(text):,} characters, over the {MAX_REPLY_CHARS:,} a reply may have "
                           "(trompe_agents.replies.MAX_REPLY_CHARS); it was not parsed")
    return text


@lru_cache(maxsize=64)
def _literal(tag: str) -> re.Pattern:
    return re.compile(re.escape(tag), re.IGNORECASE)  # a literal: linear, and the old patterns' case rules


def tag_contents(text: str, name: str) -> list[str]:
    """What each `<name>...</name>` holds, stripped, in order: what `<name>\\s*(.*?)\\s*</name>` (DOTALL,
    IGNORECASE) finds with findall, in one forward pass instead of cubic backtracking."""
    opening, closing = _literal(f"<{name}>"), _literal(f"</{name}>")
    found: list[str] = []
    start = opening.search(text)
    while start is not None and (end := closing.search(text, start.end())) is not None:
        found.append(text[start.end():end.start()].strip())
        start = opening.search(text, end.end())
    return found


def integer_text(digits: str) -> str | None:
    """Decimal digits (a `\\d+` match, any script) as int() writes them ("007" -> "7"), or None when there are
    more than MAX_NUMBER_DIGITS: such a string is no count, and int() of 4,300+ digits raises."""
    sign = "-" if digits.startswith("-") else ""
    body = digits[len(sign):]
    if not body or len(body) > MAX_NUMBER_DIGITS:
        return None
    return str(int(sign + body))
