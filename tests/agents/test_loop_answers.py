"""The tolerant final-answer parser: JSON wherever the model put it, checked against the schema."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.final_answer import AnswerError, parse_answer

SCHEMA = {"type": "object", "properties": {"answer": {"enum": ["A", "B", "C", "D"]},
                                           "reason": {"type": "string"}},
          "required": ["answer"]}
answers = st.fixed_dictionaries({"answer": st.sampled_from("ABCD")}, optional={"reason": st.text(max_size=40)})
prose = st.text(alphabet=st.characters(blacklist_characters="{}`"), max_size=60)


@given(answers, prose, prose, st.sampled_from(["plain", "fence", "json-fence"]))
def test_answer_found_wherever_the_model_wrote_it(answer, before, after, style):
    body = json.dumps(answer)
    wrapped = {"plain": body, "fence": f"```\n{body}\n```", "json-fence": f"```json\n{body}\n```"}[style]
    assert parse_answer(f"{before}\n{wrapped}\n{after}", SCHEMA) == answer


def test_first_valid_object_wins_over_an_invalid_earlier_one():
    text = 'Options were {"answer": "E"} or {"answer": "B", "reason": "longer"}; I pick B.'
    assert parse_answer(text, SCHEMA) == {"answer": "B", "reason": "longer"}


def test_nested_objects_are_read_whole():
    schema = {"type": "object", "required": ["box"], "properties": {"box": {"type": "object"}}}
    assert parse_answer('Here: {"box": {"x": 1, "y": {"z": 2}}} done', schema) == {"box": {"x": 1, "y": {"z": 2}}}


def test_errors_say_what_is_wrong():
    with pytest.raises(AnswerError, match="no JSON object"):
        parse_answer("The answer is B.", SCHEMA)
    with pytest.raises(AnswerError, match="answer: 'E' is not one of"):
        parse_answer('{"answer": "E"}', SCHEMA)
    with pytest.raises(AnswerError, match="'answer' is a required property"):
        parse_answer('{"reason": "none"}', SCHEMA)
