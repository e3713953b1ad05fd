"""Final answers fit each item: one letter per real option, lenient spelling, a dataset's own tags accepted."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.final_answer import (AnswerError, choice_schema, option_letters, parse_answer,
                                        without_format_instructions)
from trompe_agents.testing.dataset_files import TASK1_PROMPT


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, 9))),
       st.sampled_from(["{}", "({})", "{}.", " {} ", "**{}**"]), st.booleans())
def test_a_letter_within_the_options_is_read_in_any_spelling_and_one_beyond_is_refused(case, spelling, lower):
    count, pick = case
    letter = "ABCDEFGHIJ"[pick]
    written = spelling.format(letter.lower() if lower else letter)
    reply = f'{{"reasons": "r", "answer": "{written}"}}'
    schema = choice_schema(option_letters(count))
    if pick < count:
        assert parse_answer(reply, schema)["answer"] == letter
    else:
        with pytest.raises(AnswerError, match="is not one of"):
            parse_answer(reply, schema)


@pytest.mark.parametrize(("reply", "answer"), [
    ("<reasons>equal</reasons><answer>1</answer>", "yes"), ("<answer> 0 </answer>", "no"),
    ('{"reasons": "r", "answer": "Yes"}', "yes"),
    ("<reasons>a</reasons><answer>0</answer> then <answer>1</answer>", "yes"),  # the last tag is the committed one
])
def test_yes_no_answers_in_json_or_in_the_datasets_tags(reply, answer):
    assert parse_answer(reply, choice_schema(["yes", "no"]))["answer"] == answer


def test_option_counts_outside_one_to_eight_are_refused_with_the_range():
    for bad in (0, 9):
        with pytest.raises(ValueError, match="1 to 8 options"):
            option_letters(bad)


def test_datacv_answer_instructions_are_removed_and_the_question_kept():
    text = without_format_instructions(TASK1_PROMPT)
    assert text == "Are the two black lines of equal length?"
    assert without_format_instructions("Is it red?\nAnswer yes or no.") == "Is it red?\nAnswer yes or no."
