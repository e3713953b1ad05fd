"""Answer extraction and the harness scorers read hostile replies in linear time, and read every other reply as the
backtracking patterns they replace did (those patterns are kept here as the oracle, run on short texts only)."""

from __future__ import annotations

import re

import pytest
from alarmkit import alarm
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.datasets import answers, blindtest
from trompe_agents.datasets.forms import (BARE_CHOICE, CHOICE_TIERS, COLUMNS_WORD, COUNT_TIERS, ROWS_WORD,
                                          YESNO_TIERS, _END, _named_rows_columns, _then, extract)

# ---------------------------------------------------------------- the patterns as they were

OLD_IS = r"\s*(?:is|would be|should be|=|:)\s*[:\-]?\s*\**"
OLD_CUES = [r"(?i:\b(?:final|correct|best|right)\s+(?:answer|option|choice)" + OLD_IS + r")",
            r"(?i:\banswer" + OLD_IS + r")",
            r"(?i:\b(?:i(?:'d| would| will|'ll)?\s+(?:choose|pick|select|go with|say)|i\s+am\s+going\s+with|"
            r"going with|my choice is|choosing)\s*:?\s*(?:option\s+)?\**)"]
OLD_CHANGED = {  # (tiers, tier, index) -> the pattern it was
    **{(id(CHOICE_TIERS), 0, i): re.compile(cue + r"\(([A-Ha-h])\)") for i, cue in enumerate(OLD_CUES)},
    **{(id(CHOICE_TIERS), 0, 3 + i): re.compile(cue + r"([A-H])" + _END) for i, cue in enumerate(OLD_CUES)},
    **{(id(CHOICE_TIERS), 0, 6 + i): re.compile(cue + r"([a-h])(?=\**\s*(?:$|[.)]\s*$|\n))")
       for i, cue in enumerate(OLD_CUES)},
    (id(CHOICE_TIERS), 4, 0): re.compile(r"(?m)^\s*\**\(?([A-Ha-h])\)?\**\s*[.:)]\s"),
    (id(YESNO_TIERS), 0, 0): re.compile(r"\banswer\s*(?:is|would be|should be|=|:)\s*[:\-]?\s*\**['\"]?(yes|no)\b",
                                        re.I),
    (id(COUNT_TIERS), 0, 0): re.compile(r"\banswer\s*(?:is|would be|should be|=|:)\s*[:\-]?\s*\**(-?\d+|[a-z]+)\b",
                                        re.I),
    (id(COUNT_TIERS), 2, 0): re.compile(r"\b(?:there (?:are|is|were)|i (?:can )?(?:count|see)|total(?: of| is)?|"
                                        r"count(?: is)?|exactly|makes|in total,?)\s*:?\s*(-?\d+|[a-z]+)\b", re.I),
}
OLD_ROWS_NAMED = re.compile(r"rows?\s*[=:]?\s*\{?\s*(\d+)\s*\}?.*?columns?\s*[=:]?\s*\{?\s*(\d+)", re.I | re.S)
OLD_ROWS_COUNTED = re.compile(r"(\d+)\s*rows?\b.*?(\d+)\s*columns?", re.I | re.S)
OLD_ROWS_THEN_COLUMNS = re.compile(r"rows?\b.*columns?", re.I | re.S)
OLD_BARE = re.compile(r"\W*(?:option|choice|answer)?\W*\(?([A-Ha-h])\)?[.:)]?\W*", re.I)
OLD_FIRST_BRACES = re.compile(r"\{(.*?)\}")
OLD_VLMEVAL = {blindtest.VLMEVAL_ROWS: re.compile(r"[Rr]ows?(?:[^{}]*)\{(\d+)\}"),
               blindtest.VLMEVAL_COLUMNS: re.compile(r"[Cc]olumns?(?:[^{}]*)\{(\d+)\}")}

# Text built from what these patterns look for, with whitespace of several kinds (\n is the only line break of
# (?m)^), punctuation runs, digits of another script and case-folding oddities (ſ is s, K is k without case).
PIECES = ["answer", "Answer", " is ", "is", " would be", "=", ":", "-", "*", "**", "(", ")", "[", "{", "}", ".", "!",
          ",", "'", '"', " ", "  ", "\n", "\n\n", "\t", "\xa0", "\u2028", "A", "b", "h", "C", "z", "yes", "no", "5",
          "12", "٣", "x", "row", "rows", "Row", "ROWS", "roſ", "column", "columns", "Columns", "option", "choice",
          "final", "correct answer", "i choose", "i'd pick", "going with", "choosing", "count", "there are", "total of",
          "in total,", "exactly", "\u212a"]
SHORT = [" ", "\n", "\t", "\xa0", "(", ")", ".", ":", "*", "{", "}", "A", "b", "5"]  # drawn as often as all the rest
texts = st.lists(st.sampled_from(PIECES) | st.sampled_from(SHORT), max_size=30).map("".join)


def found_by(pattern: re.Pattern, text: str) -> list[tuple[int, str]]:
    """What `_last_in_tiers` reads from a pattern: each match's group position and text."""
    return [(m.start(1), m.group(1)) for m in pattern.finditer(text)]


@given(texts)
def test_every_tier_pattern_finds_what_the_old_pattern_found(text):
    for tiers in (CHOICE_TIERS, YESNO_TIERS, COUNT_TIERS):
        for t, tier in enumerate(tiers):
            for i, pattern in enumerate(tier):
                old = OLD_CHANGED.get((id(tiers), t, i), pattern)
                assert found_by(pattern, text) == found_by(old, text), (t, i, pattern.pattern)


@given(texts)
def test_rows_and_columns_and_a_bare_letter_read_as_the_old_patterns_did(text):
    old = OLD_ROWS_NAMED.search(text) or OLD_ROWS_COUNTED.search(text)
    assert _named_rows_columns(text) == (old.groups() if old else None)
    assert bool(_then(ROWS_WORD, COLUMNS_WORD, text)) == bool(OLD_ROWS_THEN_COLUMNS.search(text))
    bare, old_bare = BARE_CHOICE.fullmatch(text.strip()), OLD_BARE.fullmatch(text.strip())
    assert (bare and bare.group(1)) == (old_bare and old_bare.group(1))


@given(texts)
def test_vlmevalkit_reads_braces_and_grids_as_its_patterns_do(text):
    old = OLD_FIRST_BRACES.search(text)
    assert blindtest._first_braces(text) == (old.group(1) if old else "")
    for new, old_pattern in OLD_VLMEVAL.items():
        found, old = new.search(text), old_pattern.search(text)
        assert (found and found.group(1)) == (old and old.group(1))


# ---------------------------------------------------------------- hostile replies

N = 200_000  # twice the largest reply the agent or SEVEX parses: a scorer reads imported replies uncapped


@pytest.mark.parametrize("kind, text, expected", [
    ("choice", "answer is" + "\n" * N + "z", None),  # every split of the run between `\s*` `[:\-]?` `\s*`
    ("choice", "\n" * N + "!", None),  # the list-marker tier from every line start: 20,000 newlines took 23 s
    ("choice", "\n" * N + "B. yes", "B"),
    ("choice", "(" * N + "!", None), ("choice", "{" * N + "b" + ")" * N + "z", None),  # the bare-letter reply
    ("choice", "i choose" + " " * N + "!", None), ("yesno", "answer is" + "\t" * N + "z", None),
    ("integer", "there are" + " " * N + ":" + " " * N + "!", None),
    ("pair", "row 1 " * (N // 6), None),  # `.*?columns` from every "row"
    ("pair", "1 rows " * (N // 7), None), ("pair", "rows " + "9" * N + "z", None),
    ("pair", "row 1 " * (N // 6) + "columns 2", "1,2"),
    ("auto", "row " * (N // 4), None), ("auto", "rows " * (N // 5) + "{3}", "3"),
])
def test_extraction_of_hostile_replies_finishes(kind, text, expected):
    with alarm(20):
        assert extract(kind, text) == expected


@pytest.mark.parametrize("read, text, expected", [
    (blindtest._first_braces, "{" * N, ""), (blindtest._first_braces, "{" * N + "\n{x}", "x"),
    (lambda t: blindtest._vlmeval_grid(t, "5,6"), "Row " * (N // 4) + "{5} columns {6}", True),
    (lambda t: blindtest._vlmeval_grid(t, "5,6"), "row column " * (N // 11), False),
    (lambda t: blindtest.lmms_blindtest_parse(t, "counting grid - blank grids"), "{" + "9" * N, None),
    (lambda t: answers.extract("blink", t, ["left", "right"]), "answer is" + " " * N + "!", None),
])
def test_harness_scorers_of_hostile_replies_finish(read, text, expected):
    with alarm(20):
        assert read(text) == expected


@pytest.mark.parametrize("text", ["rows={" + "9" * 5_000 + "} columns={6}", "(" + "9" * 5_000 + ", 6)"])
def test_a_grid_number_past_the_digit_cap_is_wrong_and_raises_nothing(text):
    assert blindtest._vlmeval_grid(text, "5,6") is False
    assert blindtest._vlmeval_grid("rows={5} columns={6}", "5,6") is True
