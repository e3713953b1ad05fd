"""The tie-breaks of the harness rules trompe reproduces, pinned on each side.

- BLINK (zeyofu/BLINK_Benchmark eval/test_benchmark.py `analyze_answer` at 63137e4, and the matcher of
  datasets/blink_match.py): of the answers a reply states, the last one wins ("The correct answer is A. Wait, ...
  the correct answer is B." reads B); a reply with one bracketed option token is read by the official token rule
  before any stated answer.
- VLMEvalKit (open-compass/VLMEvalKit vlmeval/utils/matching_util.py `can_infer_option` at e8e78f0): the one
  option letter counts only where it first stands among the last four words (`splits.index(ch) > len(splits) - 5`).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.datasets.blink_match import Match, match
from trompe_agents.datasets.vlmeval_match import Inferred, exact_matching, infer_option

LETTERS = "ABCD"


@pytest.mark.parametrize("reply, expected", [
    ("The correct answer is A. Wait, looking at the edges again, the correct answer is B.", "(B)"),
    ("The correct answer is B. Wait, looking at the edges again, the correct answer is A.", "(A)"),
    ("The answer is C.\n\nOn reflection the answer is D.", "(D)"),
    ("The correct answer is A.", "(A)"),  # one statement: itself
])
def test_blink_the_last_stated_answer_wins(reply, expected):
    assert match(reply, letters=4) == Match(expected, "stated answer")


def test_blink_a_stated_letter_outside_the_options_is_not_an_answer():
    """E is no option of a four-option item: the last *valid* statement wins."""
    assert match("The correct answer is B. Wait, the correct answer is E.", letters=4) == Match("(B)", "stated answer")
    assert match("The correct answer is B. Wait, the correct answer is E.", letters=5) == Match("(E)", "stated answer")


def test_blink_one_bracketed_option_token_is_read_by_the_official_rule_first():
    assert match("(A) looks right. Wait, the correct answer is B.", letters=4) == Match("(A)", "token")
    # two tokens: the official rule reads none, so the stated answer decides
    assert match("(A) or (C) then. The correct answer is B.", letters=4) == Match("(B)", "stated answer")


PHRASES = ["The correct answer is A.", "the answer is C", "Answer: D", "Point B is closer.", "Wait,", "option A",
           "I'm sorry, I cannot tell.", "b", "the final answer is E", "\n\n", "Box C", "<s>"]
# text with no bracket: a bracketed option token would be read by the official token rule before any statement
PROSE = st.text(st.characters(blacklist_characters="()", blacklist_categories=("Cs",)), max_size=40)


@given(st.lists(st.one_of(st.sampled_from(PHRASES), PROSE), max_size=8), st.sampled_from(LETTERS),
       st.sampled_from(["\n\n", " ", ". Wait, "]))
def test_blink_an_appended_final_statement_of_a_valid_letter_always_wins(parts, letter, joint):
    reply = " ".join(parts) + f"{joint}The correct answer is {letter}."
    assert match(reply, letters=4).prediction == f"({letter})", reply


CHOICES = ["red", "green", "blue", "black"]


@pytest.mark.parametrize("reply, expected", [
    ("so B is my pick", Inferred("B", "option letter")),  # B is the 4th word from the end: index 1 > 5 - 5
    ("so B. is my pick", Inferred("B", "option letter")),  # "." is a space, not a word
    ("B is my pick", Inferred("B", "option letter")),  # 3rd from the end
    ("so B is my own pick", None),  # 5th from the end: index 1 > 6 - 5 fails, and nothing else reads it
    ("B, so B is it", None),  # where it *first* stands counts: index 0 > 5 - 5 fails
    ("so, B: B is it", Inferred("B", "option letter")),  # first stands at index 1 > 0
])
def test_vlmevalkit_the_letter_counts_only_among_the_last_four_words(reply, expected):
    assert infer_option(reply, list(LETTERS)) == expected


def test_vlmevalkit_just_outside_the_last_four_words_scores_z():
    assert exact_matching("so B is my own pick", CHOICES) == Inferred("Z", "no option (exact matching: Z)")
    assert exact_matching("so B is my pick", CHOICES) == Inferred("B", "option letter")


# BLINK's matcher reads an option by its text only as a whole word, and a text inside a longer option's text
# ("red" in "dark red") yields to the longer one; a one-character text ("x") is too short to be read at all
@pytest.mark.parametrize("reply, choices, expected", [
    ("The blue one, not the hundred others.", ["red", "blue"], "(B)"),  # "red" inside a word before it
    ("The blue one; the other is reddish.", ["red", "blue"], "(B)"),  # "red" inside a word after it
    ("The red one; the other is bluish.", ["red", "blue"], "(A)"),
    ("the dark red one", ["red", "dark red"], "(B)"),  # the longer option holding the shorter wins
    ("the red one", ["red", "dark red"], "(A)"),
    ("I pick the red one, not x.", ["x", "the red one"], "(B)"),  # "x" is one character: no text to read
])
def test_blink_an_option_text_counts_as_a_whole_word_and_the_longer_of_two_nested_texts_wins(reply, choices,
                                                                                            expected):
    assert match(reply, choices) == Match(expected, "option text")


def test_blink_two_option_texts_in_one_reply_read_as_no_option():
    assert match("Either the red one or the blue one.", ["red", "blue"]).prediction is None


def test_vlmevalkit_reads_an_option_text_only_in_a_reply_at_most_twice_all_option_texts_long():
    """`can_infer_text`: `len(answer) > 2 * sum(len(option texts))` reads nothing; red + blue: 7, so 14 chars."""
    from trompe_agents.datasets.vlmeval_match import infer_text

    table = {"A": "red", "B": "blue"}
    assert len("it is red, ok.") == 14 and infer_text("it is red, ok.", table) == Inferred("A", "option text")
    assert infer_text("it is red, ok!!", table) is None


@pytest.mark.parametrize("letter", list("ABCDE"))
def test_blink_a_reply_that_is_one_capital_letter_is_read_by_the_official_token_rule(letter):
    """`analyze_answer`: `if response in ["A", "B", "C", "D", "E"]` comes before any matcher rule."""
    assert match(letter, letters=5) == Match(f"({letter})", "token")
    assert match(letter.lower(), letters=5) == Match(f"({letter})", "bare letter")  # the matcher's, not official


@pytest.mark.parametrize("reply", [None, "", "  \n "])
def test_blink_an_empty_reply_is_read_as_empty(reply):
    assert match(reply, letters=4) == Match(None, "empty")


def test_blink_reads_only_the_item_s_own_option_letters():
    """The item's options set the letters (its `letters`, else its choices, else A-E): a bracketed (C) on a
    two-option item is no token, with or without stray tokens before it."""
    assert match("(C) is the one.", letters=2) == Match(None, "no option")
    assert match("<s> (C) is the one.", letters=2) == Match(None, "no option")
    assert match("(B) is the one.", letters=2) == Match("(B)", "token")
    assert match("The correct answer is C.", ["x", "y"]) == Match(None, "no option")
    assert match("The correct answer is C.", ["x", "y", "z"]) == Match("(C)", "stated answer")
    assert match("The correct answer is E.") == Match("(E)", "stated answer")  # no options named: A-E


def test_blink_one_token_in_the_reply_but_none_in_its_last_paragraph_is_that_token():
    """`analyze_answer`: the last paragraph's token when it holds exactly one, else the one token anywhere."""
    assert match("(A) seems right.\n\nBut I am not sure.", letters=4) == Match("(A)", "token")
    assert match("(A) seems right.\n\nNo, (B) it is.", letters=4) == Match("(B)", "token")  # two anywhere


@pytest.mark.parametrize("reply, expected", [
    ("Point B is closer. Point A is farther.", Match("(B)", "named letter, first sentence")),
    ("Point A or Point B? Hard to say.\n\nPoint B is it.", Match("(B)", "named letter, last paragraph")),
    ("I compared them. Point C is nearest.\n\nThat is all.", Match("(C)", "named letter, reply")),
    ("I looked closely. It is the second one.", Match("(B)", "option text")),  # not in the first sentence
])
def test_blink_a_named_letter_is_read_first_sentence_then_last_paragraph_then_anywhere(reply, expected):
    assert match(reply, ["first", "second", "third"]) == expected
