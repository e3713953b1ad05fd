"""How a record's `correct` is decided: labels 1/0 mean yes/no only for yes/no items, never for a count."""

from __future__ import annotations

from pathlib import Path

import pytest

from trompe_agents.datasets.answer_types import AnswerType
from trompe_agents.illusion.correctness import matches_label


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
    assert matches_label(answer, label, task, kind) is right


def test_a_blindtest_run_forced_into_task_1_still_scores_each_count_as_a_count(tmp_path, monkeypatch, capsys):
    """`--task 1` on BlindTest: its counts of 1 and its yes/no items are each read in their own type, so a model
    giving every gold in the form its item asks for scores 100% (a count of 1 read as "yes" was marked wrong)."""
    from trompe_agents.illusion.cli import main as illusion_agent
    from runlines import written

    datasets = Path(__file__).parents[1] / "datasets"
    monkeypatch.syspath_prepend(str(datasets))  # replicas.py (the HF layout) and scripted_answers.py live there
    from replicas import write_blindtest_hf

    dataset = write_blindtest_hf(tmp_path / "valid-00000-of-00001.parquet")
    assert illusion_agent(["run", "--dataset", str(dataset), "--out", str(tmp_path / "run"), "--task", "1",
                           "--images-root", str(tmp_path / "img"), "--backend", "function", "--no-progress",
                           "--model", "scripted_answers:gold_in_requested_format"]) == 0
    records = written(tmp_path / "run").values()
    ones = [r for r in records if r["answer_type"] == "integer" and str(r["label"]) == "1"]
    assert ones and all(r["answer"] == "1" and r["correct"] for r in ones)
    assert all(r["correct"] for r in records) and "Task 1" in capsys.readouterr().err
