"""How a record's `correct` is decided: labels 1/0 mean yes/no only for yes/no items, never for a count."""

from __future__ import annotations

import pytest

from trompe_agents.datasets.answer_types import AnswerType
from trompe_agents.illusion.runner import is_correct


@pytest.mark.parametrize(("answer", "label", "task", "kind", "right"), [
    ("yes", "1", 1, None, True),  # DataCV Task I: its labels are 1/0
    ("no", "0", 1, None, True),
    ("no", "1", 1, None, False),
    ("1", "1", 1, AnswerType("integer"), True),  # a BlindTest count of 1 forced into a Task I run
    ("yes", "1", 1, AnswerType("integer"), False),
    ("0", "0", 2, AnswerType("integer"), True),
    ("yes", "1", 2, AnswerType("yesno"), True),  # a yes/no item in a Task II run keeps its 1/0 gold
    ("B", "(B)", 2, None, True),
    ("b", "B", 2, AnswerType("choice", 4), True),
    ("yes", None, 1, None, None),
    (None, "1", 1, None, None),
])
def test_a_label_is_read_in_the_items_own_answer_type(answer, label, task, kind, right):
    assert is_correct(answer, label, task, kind) is right
