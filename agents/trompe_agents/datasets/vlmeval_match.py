"""VLMEvalKit's multiple-choice and yes/no readings of a reply, deterministic (its `exact_matching` policy).

Follows open-compass/VLMEvalKit vlmeval/utils/matching_util.py at e8e78f0: `can_infer` tries
`can_infer_option` (a refusal phrase reads Z; the reply's marks `.()[],:;!*#{}` made spaces; exactly one option
letter among the words, standing in the last four words; else a lone Z; else "answer is X") and then
`can_infer_text` (the one option whose lower-cased text is in a reply at most twice as long as all option texts
together). vlmeval/dataset/utils/multiple_choice.py `extract_answer_from_item` scores Z when neither reads an
option and no judge is set. The `VERBOSE` environment check that can refuse a lone "A" is off by default and
left out. Written from those rules, not copied; every step is linear in the reply's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

API_FAILURE = "Failed to obtain answer via API"
REFUSALS = ("Sorry, I can't help with images of people yet.", "I can't process this file.",
            "I'm sorry, but without the image provided", "Cannot determine the answer")
MARKS = str.maketrans({mark: " " for mark in ".()[],:;!*#{}"})
VERBOSE_ANSWER = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")


@dataclass(frozen=True)
class Inferred:
    """The option letter a reply reads as ("Z": none), or None where a judge would be asked; and the rule."""

    letter: str | None
    rule: str


def infer_option(reply: str, letters: list[str]) -> Inferred | None:
    """`can_infer_option`: the letter, "Z", or None (it returns False) where the text rule comes next."""
    if API_FAILURE in reply:
        return None
    if any(refusal in reply for refusal in REFUSALS):
        return Inferred("Z", "refusal phrase")
    words = reply.translate(MARKS).split()
    present = [letter for letter in letters if letter in words]
    if len(present) == 1:
        if words.index(present[0]) > len(words) - 5:  # the first time it stands, among the last four words
            return Inferred(present[0], "option letter")
    elif not present and "Z" in words:
        return Inferred("Z", "letter Z")
    stated = VERBOSE_ANSWER.search(reply)
    if stated and stated.group(1).upper() in letters:
        return Inferred(stated.group(1).upper(), "answer is X")
    return None


def infer_text(reply: str, choices: dict[str, str]) -> Inferred | None:
    """`can_infer_text`: the one option whose text the reply holds, in a reply not too long to tell."""
    lowered = reply.lower()
    if len(lowered) > 2 * sum(len(text) for text in choices.values()):
        return None
    found = [letter for letter, text in choices.items() if text.lower() in lowered]
    return Inferred(found[0], "option text") if len(found) == 1 else None


def options(choices: list[str] | None) -> dict[str, str]:
    """A record's choices as VLMEvalKit's `build_choices` holds a TSV row's A, B, ... columns."""
    return {chr(ord("A") + i): str(text) for i, text in enumerate(choices or [])}


def infer(reply: str, choices: list[str] | None) -> Inferred | None:
    """`can_infer`: the option rule, then the text rule; None where `extract_answer_from_item` asks its judge."""
    table = options(choices)
    return infer_option(reply, list(table)) or infer_text(reply, table)


def exact_matching(reply: str, choices: list[str] | None) -> Inferred:
    """The letter under `exact_matching`: what `can_infer` reads, else Z."""
    return infer(reply, choices) or Inferred("Z", "no option (exact matching: Z)")


def vlmeval_yes_no(text: str) -> str:
    """VLMEvalKit `YOrN_Extraction` (vlmeval/dataset/utils/yorn.py at e8e78f0) over `process_punctuation`
    (vlmeval/smp/misc.py): 'Yes' when the words hold yes and not no, 'No' the other way, else 'Unknown'."""
    words = _vlmeval_punctuation(text.lower()).split()
    if "yes" in words and "no" not in words:
        return "Yes"
    if "no" in words and "yes" not in words:
        return "No"
    return "Unknown"


PUNCTUATION = [";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",",
               "?", "!"]


def _vlmeval_punctuation(text: str) -> str:
    """`process_punctuation`: each mark dropped when spaced or when digits hold a comma, else made a space; then
    periods not between digits dropped (at most 32 of them: `re.UNICODE` is passed as sub's count)."""
    out = text
    digit_comma = re.search(r"(\d)(,)(\d)", text) is not None
    for mark in PUNCTUATION:
        out = out.replace(mark, "" if (mark + " " in text or " " + mark in text) or digit_comma else " ")
    return re.sub(r"(?<!\d)\.(?!\d)", "", out, count=int(re.UNICODE))
