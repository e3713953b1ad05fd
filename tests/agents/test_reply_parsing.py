"""Replies are read in bounded time: the one-pass readers find what the old backtracking patterns found, and the
inputs that made those patterns run for minutes finish (under a generous alarm, so the bound is not a timing)."""

from __future__ import annotations

import json
import re

import pytest
from alarmkit import alarm
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.datasets.answers import extract
from trompe_agents.datasets.forms import BOXED, BRACES, DIGIT_PAIR, EXTRACTORS
from trompe_agents.final_answer import (INTEGER, LETTER, PAIR, SHORT, choice_schema, fenced, json_objects,
                                        parse_answer, reformat, unwrapped)
from trompe_agents.replies import (MAX_NUMBER_DIGITS, MAX_REPLY_CHARS, AnswerError, ReplyTooLong, integer_text,
                                   tag_contents)

# The patterns these readers replace, kept here as the reference semantics.
OLD_TAG = r"<{0}>\s*(.*?)\s*</{0}>"
OLD_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
OLD_WRAPPER = re.compile(r"^\s*(?:\\box(?:ed)?\{|\{|\(|\[)?\s*['\"*]?(.*?)['\"*]?\s*[}\)\]]?\s*[.!]?\s*$", re.DOTALL)
OLD_BRACES = re.compile(r"\{\s*([^{}]*?)\s*\}")
OLD_BOXED = re.compile(r"\\boxed\{\s*([^{}]*?)\s*\}")
OLD_PAIR = re.compile(r"\(?\s*(\d+)\s*[,x×]\s*(\d+)\s*\)?")

# Text built from the pieces the patterns care about: tags in several cases, fences, wrappers, braces, and
# whitespace Python's \s and str.strip both count (including the Unicode ones), plus case-folding oddities.
PIECES = ["<answer>", "</answer>", "<ANSWER>", "</Answer>", "<reasons>", "</reasons>", "```", "```json", "json",
          "{", "}", "(", ")", "[", "]", "\\boxed{", "\\box{", "'", '"', "*", ".", "!", " ", "\n", "\t", "\x0b",
          "\x1c", "\xa0", "\u2028", "\u3000", "a", "B", "7", "12", "٣", ",", "x", "×", "ſ", "K", "İ", "yes"]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


@given(texts, st.sampled_from(["answer", "reasons", "Answer"]))
def test_tag_contents_finds_what_the_old_tag_pattern_found(text, name):
    old = re.findall(OLD_TAG.format(re.escape(name)), text, re.DOTALL | re.IGNORECASE)
    assert tag_contents(text, name) == old


@given(texts)
def test_fences_braces_and_wrappers_read_as_the_old_patterns_did(text):
    assert fenced(text) == [m.group(1).strip() for m in OLD_FENCE.finditer(text)]
    assert BRACES.findall(text) == OLD_BRACES.findall(text)
    assert BOXED.findall(text) == OLD_BOXED.findall(text)
    assert DIGIT_PAIR.findall(text) == OLD_PAIR.findall(text)
    assert unwrapped(text) == OLD_WRAPPER.match(text).group(1)


def old_json_objects(text: str) -> list[dict]:
    """The search as it was: every '{' decoded, repeats compared with ==."""
    found = []
    for candidate in [text.strip(), *(m.group(1).strip() for m in OLD_FENCE.finditer(text))]:
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


JSON_PIECES = ["{", "}", "[", "]", ":", ",", " ", "\n", '"', '"a"', '"answer"', '"yes"', '"{"', '"\\"', "1", "null",
               "```", "```json", "x"]


@given(st.lists(st.sampled_from(JSON_PIECES), max_size=40).map("".join))
def test_the_json_search_finds_what_decoding_at_every_brace_found(text):
    assert json_objects(text) == old_json_objects(text)


@given(st.text("0123456789٠١٢٣٤٥٦٧٨٩", min_size=1, max_size=3 * MAX_NUMBER_DIGITS))
def test_integer_text_writes_digits_as_int_does_up_to_the_digit_cap(digits):
    assert integer_text(digits) == (str(int(digits)) if len(digits) <= MAX_NUMBER_DIGITS else None)


@pytest.mark.parametrize("hostile", [
    "<answer>" + " " * 200_000,  # 2,000 spaces took 12.6 s in the old pattern, 5,000 took 209 s
    "<answer>" + "\n" * 200_000 + "x",
    "<reasons>" + " \n" * 100_000,
])
def test_tag_extraction_of_long_whitespace_runs_finishes(hostile):
    with alarm(20):
        assert tag_contents(hostile, "answer") == [] and tag_contents(hostile, "reasons") == []


@pytest.mark.parametrize("answer, expected", [
    ("3", {"integer": "3", "letter": "3", "string": "3", "auto": "3"}),
    ("yes", {"yesno": "yes", "binary": "yes", "string": "yes", "auto": "yes"}),
    ("B", {"choice": "B", "letter": "B", "string": "b", "auto": "B"}),
])
def test_every_extractor_reads_an_answer_tag_padded_with_whitespace_runs(answer, expected):
    padded = "<answer>" + " " * 100_000 + answer + "\n" * 100_000 + "</answer>"
    with alarm(20):
        found = {kind: extract(kind, padded) for kind in [*EXTRACTORS, "auto"]}
    assert found == {kind: expected.get(kind) for kind in found}


def test_a_reasons_reply_of_newlines_is_refused_at_once_and_an_over_cap_reply_is_not_parsed():
    schema = choice_schema(["yes", "no"])
    with alarm(20):
        with pytest.raises(AnswerError, match="no JSON object"):
            parse_answer("<reasons>" + "\n" * 3_000, schema)  # 56 s per illusion sample before
        with pytest.raises(ReplyTooLong, match=f"over the {MAX_REPLY_CHARS:,}"):
            parse_answer('{"reasons": "r", "answer": "yes"}' + " " * MAX_REPLY_CHARS, schema)


@pytest.mark.parametrize("hostile", [
    '{"a":' * (MAX_REPLY_CHARS // 5),  # deeper than the interpreter's recursion limit
    ('{"a":[' + "1," * 48) * (MAX_REPLY_CHARS // 102),  # every start decodes to the end, then fails
    '{"' * (MAX_REPLY_CHARS // 2), "{" * MAX_REPLY_CHARS, "```" + " " * MAX_REPLY_CHARS,
    '{"a": ' + "9" * 5_000 + "}",  # past Python's 4,300-digit int limit
])
def test_json_search_of_hostile_replies_at_the_cap_finishes_without_error(hostile):
    with alarm(20):
        assert json_objects(hostile + ' {"reasons": "r", "answer": "no"}') is not None
        with pytest.raises(AnswerError):
            parse_answer(hostile, choice_schema(["yes", "no"]))


def test_answer_values_with_long_space_runs_or_digits_are_reformatted_or_left_alone():
    with alarm(20):
        assert reformat("a" + " " * 5_000 + "b", SHORT).startswith("a")  # 400 spaces took 31 s before
        assert reformat(" {k} ", LETTER) == "k"
    huge = "9" * 5_000
    assert reformat("{" + huge + "}", INTEGER) == "{" + huge + "}"  # not a count: the schema refuses it
    assert reformat(f"rows {huge} columns 3", PAIR) == f"rows {huge} columns 3"
    assert reformat("{007}", INTEGER) == "7" and reformat("(5, -6)", PAIR) == "5,6"


@pytest.mark.parametrize("kind, text", [
    ("integer", "{" + "9" * 5_000 + "}"), ("pair", "rows={" + "9" * 5_000 + "} columns={3}"),
    ("auto", "{" + "9" * 5_000 + "} {2}"), ("integer", "<answer>" + "9" * 5_000 + "</answer>"),
])
def test_a_number_past_the_digit_cap_is_no_count_and_raises_nothing(kind, text):
    assert extract(kind, text) is None
