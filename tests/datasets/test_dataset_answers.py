"""Answer extraction per benchmark: tables of real model phrasings plus properties over generated text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trompe_agents.datasets.answers import extract, normalise, states_answer
from trompe_agents.datasets.forms import EXTRACTORS

TABLE = [
    ("blink", "(B)", "B"),
    ("blink", "The answer is (C).", "C"),
    ("blink", "Answer: A", "A"),
    ("blink", "b", "B"),
    ("blink", "I cannot tell.", None),
    ("datacv1", "<reasons>The lines are equal.</reasons><answer>1</answer>", "yes"),
    ("datacv1", "<reasons>no</reasons>\n<answer> 0 </answer>", "no"),
    ("datacv1", "Yes, they are the same.", "yes"),
    ("datacv2", "<answer>D</answer>", "D"),
    ("hallusionbench", "No, the left line is longer.", "no"),
    ("hallusionbench", "Both yes and no.", None),
    ("integer", "I count {4} squares.", "4"),
    ("integer", "There are three crossings.", "3"),
    ("integer", "Crossing at x=2 and x=5, so {2}", "2"),
    ("pair", "rows={5} columns={6}", "5,6"),
    ("pair", "(7, 3)", "7,3"),
    ("pair", "The table has 4 rows and 9 columns.", "4,9"),
    ("letter", "The circled letter is 'q'.", "q"),
    ("letter", "{K}", "K"),
    ("blindtest", "{Yes}", "yes"),
    ("blindtest", "{3} {4}", "3,4"),
    ("blindtest", "rows={2} columns={8}", "2,8"),
    ("blindtest", "No intersections at all: {0}", "0"),
    ("blindtest", "{k}", "k"),
    ("blindtest", "The letter is \"e\".", "e"),
    ("probes", "No. The circles are the same size.", "no"),
    ("generic", "<answer>Blue.</answer>", "blue"),
    # each row below once let a small planted bug through (tools/mutation.py --group answers)
    ("blink", "Option: c.", "C"),
    ("pair", "Rows: 3\nColumns: 5", "3,5"),
    ("pair", "The grid has 4 Rows\nand 9 Columns.", "4,9"),
    ("pair", "{3} by {4}", "3,4"),
    ("pair", "Not {2}: it is {3} by {4}", "3,4"),
    ("pair", "a 3x4 grid", "3,4"),
    ("letter", "{'X'}", "X"),
    ("letter", "X.", "X"),
    ("letter", "The circled letter reads 'Q' to me", "Q"),
    ("letter", "Letter A? Letter B? No, the circled Letter is R", "R"),
    ("generic", "Xylophone!", "xylophone"),
    ("blindtest", "<answer>3, 4</answer>", "3,4"),
    ("blindtest", "Rows: 3\nColumns: 5", "3,5"),
    ("blindtest", "3, 4", "3,4"),
    ("blindtest", "Not {1}: {3} {4}", "3,4"),
    ("probes", "The colour is {blue}.", None),  # without a gold answer a bare word in braces is no answer
]


@pytest.mark.parametrize("fmt, text, expected", TABLE)
def test_extraction_table(fmt, text, expected):
    assert extract(fmt, text) == expected


@pytest.mark.parametrize("fmt, gold, text, correct", [
    ("blindtest", "2", "They cross {2} times", True),
    ("blindtest", "2", "They cross {1} time", False),
    ("blindtest", "no", "No, they do not touch. {No}", True),
    ("blindtest", "0", "No, they never cross: {0}", True),  # the gold answer's shape picks the extractor
    ("blindtest", "o", "{O}", True),  # circled letters compare without case (authors' notebooks, lmms-eval)
    ("blindtest", "rows=3, columns=4", "rows={3} columns={4}", True),
    ("blink", "(A)", "(A) the first one", True),
    ("datacv1", "1", "<answer>0</answer>", False),
    ("datacv2", "C", "<answer>C</answer>", True),
    ("blink", "A", "I cannot tell.", False),  # no answer read is never correct
])
def test_states_answer(fmt, gold, text, correct):
    assert states_answer(fmt, text, gold) is correct


@pytest.mark.parametrize("fmt, raw, gold", [
    ("blink", "(A)", "A"), ("datacv1", "1", "yes"), ("datacv1", 0, "no"), ("hallusionbench", "Yes", "yes"),
    ("blindtest", "Yes", "yes"), ("blindtest", "03", "3"), ("blindtest", "rows=5, columns=6", "5,6"),
    ("blindtest", "k", "k"), ("blindtest", "Blue", "blue"),
])
def test_normalise_gold_answers(fmt, raw, gold):
    assert normalise(fmt, raw) == gold


def test_options_make_letters_and_parenthesised_letters_options():
    """A custom task with options: its gold '(B)' is option B, and a reply read without a gold answer too."""
    options = ["left", "right"]
    assert normalise("auto", "(B)", options) == "B"
    assert states_answer("auto", "The answer is (B).", "(B)", options)
    assert extract("auto", "(B)", choices=options) == "B"
    assert states_answer("auto", "Yes.", "yes", options)  # a yes/no gold stays yes/no beside options


def test_the_forms_carry_the_answer_types_names_and_their_former_names_still_read():
    """One vocabulary: the form that reads an answer type has its name; a plugin's older `answer_form` still works."""
    from trompe_agents.datasets.answer_types import KINDS, AnswerType

    assert set(EXTRACTORS) == {"choice", "integer", "pair", "yesno", "binary", "letter", "string"}
    assert {AnswerType(kind).extractor() for kind in KINDS if kind != "choice"} <= set(EXTRACTORS)
    for former, now, text in (("count", "integer", "I count {4}."), ("rows_columns", "pair", "rows={5} columns={6}"),
                              ("word", "string", "<answer>Blue.</answer>"), ("generic", "string", "Blue!")):
        assert extract(former, text) == extract(now, text) is not None


def test_unknown_format_and_invalid_gold_are_errors():
    with pytest.raises(ValueError, match="benchmark_or_format: unknown 'mcq'; choose one of blindtest, blink, "):
        extract("mcq", "A")
    with pytest.raises(ValueError, match="'maybe' is not a valid datacv1 answer"):
        normalise("datacv1", "maybe")


# No per-example deadline and no too-slow check: each example takes microseconds, and on a loaded 2-core CI box
# one scheduling stall would fail the run with no bug behind it.
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
plain = st.text(alphabet=st.characters(blacklist_characters="{}()0123456789<>"), max_size=40)
plain_words = plain.filter(lambda t: not any(w in t.lower() for w in ("yes", "no", "row", "column", "answer")))


@SETTINGS
@given(st.sampled_from(sorted(EXTRACTORS) + ["blindtest", "blink", "datacv1"]), st.text(max_size=60))
def test_extractors_are_idempotent(fmt, text):
    """SEVEX scores an already extracted answer, so extracting twice must change nothing."""
    once = extract(fmt, text)
    if once is not None:
        assert extract(fmt, once) == once


@SETTINGS
@given(st.integers(0, 10_000), plain, plain)
def test_count_in_braces_wins_over_surrounding_text(n, before, after):
    assert extract("integer", f"{before} {{{n}}} {after}") == str(n)
    assert states_answer("blindtest", f"{before} {{{n}}} {after}", str(n))


@SETTINGS
@given(st.sampled_from("ABCD"), plain_words, plain_words)
def test_blink_letter_in_parentheses(letter, before, after):
    assert extract("blink", f"{before} ({letter}) {after}") == letter


@SETTINGS
@given(st.integers(1, 30), st.integers(1, 30), plain_words)
def test_rows_columns_in_benchmark_format(rows, cols, before):
    text = f"{before} rows={{{rows}}} columns={{{cols}}}"
    assert extract("blindtest", text) == f"{rows},{cols}"
    assert states_answer("blindtest", text, f"{rows},{cols}")


@SETTINGS
@given(st.one_of(st.integers(0, 99).map(str), st.sampled_from(["yes", "no"]),
                 st.tuples(st.integers(1, 20), st.integers(1, 20)).map(lambda p: f"{p[0]},{p[1]}"),
                 st.sampled_from("abcxyzABQ")))
def test_a_gold_answer_scores_itself(gold):
    assert states_answer("blindtest", gold, gold)
    assert states_answer("probes", normalise("probes", gold), gold)
