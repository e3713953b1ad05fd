"""Hostile replies: seconds to read each with the old backtracking patterns and with the linear readers.

    python bench/reply_bounds.py [--chars 2000]

The old patterns run on `--chars` characters (quadratic or cubic: 2,000 characters take up to seconds, 5,000
minutes); the new readers run on the same input and on the largest reply they accept (replies.MAX_REPLY_CHARS).
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

from trompe_agents.datasets import answers, scorers
from trompe_agents.final_answer import choice_schema, json_objects, parse_answer, unwrapped
from trompe_agents.replies import MAX_REPLY_CHARS, AnswerError, tag_contents

OLD_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)
OLD_REASONS = re.compile(r"<reasons>\s*(.*?)\s*</reasons>", re.IGNORECASE | re.DOTALL)
OLD_BRACES = re.compile(r"\{\s*([^{}]*?)\s*\}")
OLD_WRAPPER = re.compile(r"^\s*(?:\\box(?:ed)?\{|\{|\(|\[)?\s*['\"*]?(.*?)['\"*]?\s*[}\)\]]?\s*[.!]?\s*$", re.DOTALL)
OLD_LIST_MARKER = re.compile(r"(?m)^\s*\**\(?([A-Ha-h])\)?\**\s*[.:)]\s")
OLD_ANSWER_YESNO = re.compile(r"\banswer\s*(?:is|would be|should be|=|:)\s*[:\-]?\s*\**['\"]?(yes|no)\b", re.I)
OLD_BARE = re.compile(r"\W*(?:option|choice|answer)?\W*\(?([A-Ha-h])\)?[.:)]?\W*", re.I)
OLD_ROWS_NAMED = re.compile(r"rows?\s*[=:]?\s*\{?\s*(\d+)\s*\}?.*?columns?\s*[=:]?\s*\{?\s*(\d+)", re.I | re.S)
OLD_ROWS_COUNTED = re.compile(r"(\d+)\s*rows?\b.*?(\d+)\s*columns?", re.I | re.S)
OLD_ROWS_THEN_COLUMNS = re.compile(r"rows?\b.*columns?", re.I | re.S)
OLD_FIRST_BRACES = re.compile(r"\{(.*?)\}")
OLD_VLMEVAL_ROWS = re.compile(r"[Rr]ows?(?:[^{}]*)\{(\d+)\}")

Case = tuple[str, Callable[[int], str], Callable[[str], object], Callable[[str], object]]


def repeat(unit: str, end: str = "") -> Callable[[int], str]:
    """A reply of `unit` repeated to about `n` characters, then `end`."""
    return lambda n: unit * max(1, n // len(unit)) + end


def cases() -> list[Case]:
    """(name, reply of about n characters, old reader, new reader)."""
    return [
        ("<answer> + spaces", lambda n: "<answer>" + " " * n, OLD_TAG.findall, lambda t: tag_contents(t, "answer")),
        ("<reasons> + newlines", lambda n: "<reasons>" + "\n" * n, OLD_REASONS.findall,
         lambda t: tag_contents(t, "reasons")),
        ("{ + spaces", lambda n: "{" + " " * n, OLD_BRACES.findall, answers.BRACES.findall),
        ("answer value a + spaces + b", lambda n: "a" + " " * min(n, 300) + "b", OLD_WRAPPER.match, unwrapped),
        ("newlines: option list marker", repeat("\n", "!"), OLD_LIST_MARKER.findall,
         answers.CHOICE_TIERS[4][0].findall),
        ("answer is + newlines", lambda n: "answer is" + "\n" * n + "z", OLD_ANSWER_YESNO.findall,
         answers.YESNO_TIERS[0][0].findall),
        ("( run: a bare option letter", repeat("(", "!"), OLD_BARE.fullmatch, answers.BARE_CHOICE.fullmatch),
        ('"row 1 " repeated', repeat("row 1 "), OLD_ROWS_NAMED.search, answers._named_rows_columns),
        ('"1 rows " repeated', repeat("1 rows "), OLD_ROWS_COUNTED.search, answers._named_rows_columns),
        ('"row " repeated: auto', repeat("row "), OLD_ROWS_THEN_COLUMNS.search,
         lambda t: answers._then(answers.ROWS_WORD, answers.COLUMNS_WORD, t)),
        ("{ repeated: VLMEvalKit braces", repeat("{"), OLD_FIRST_BRACES.search, scorers._first_braces),
        ('"row " repeated: VLMEvalKit grid', repeat("row "), OLD_VLMEVAL_ROWS.search, scorers.VLMEVAL_ROWS.search),
    ]


def seconds(read: Callable[[str], object], text: str) -> float:
    started = time.perf_counter()
    try:
        read(text)
    except AnswerError:
        pass
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", "--spaces", type=int, default=2000,
                        help="length of the hostile run the old patterns get")
    n = parser.parse_args().chars
    schema = choice_schema(["yes", "no"])
    print(f"{'reply':34} {'chars':>8} {'old s':>8} {'new s':>8} {'new s at cap':>13}")
    for name, build, old, new in cases():
        text, at_cap = build(n), build(MAX_REPLY_CHARS)[:MAX_REPLY_CHARS]
        print(f"{name:34} {len(text):8} {seconds(old, text):8.3f} {seconds(new, text):8.4f} "
              f"{seconds(new, at_cap):13.4f}")
    worst = {"nested objects": '{"a":' * (MAX_REPLY_CHARS // 5),
             "unclosed arrays": ('{"a":[' + "1," * 48) * (MAX_REPLY_CHARS // 102),
             "distinct objects": "".join(f'{{"a":{i}}}' for i in range(MAX_REPLY_CHARS // 12))}
    for name, text in worst.items():
        print(f"{'json: ' + name:34} {len(text):8} {'':>8} {seconds(json_objects, text):8.4f}")
    print(f"{'parse_answer: reasons+newlines':34} {MAX_REPLY_CHARS:8} {'':>8} "
          f"{seconds(lambda t: parse_answer(t, schema), '<reasons>' + chr(10) * (MAX_REPLY_CHARS - 9)):8.4f}")


if __name__ == "__main__":
    main()
