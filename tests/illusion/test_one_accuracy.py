"""Every reader of a run says the same numbers: records.accuracy is the one definition, so the report page, its
summary.json, samples.csv, the console summary and a comparison agree on a folder an older run left behind."""

from __future__ import annotations

import csv
import json

import pytest

from trompe_agents.illusion.cli import main
from trompe_agents.illusion.compare import compare_runs
from trompe_agents.records import INVENTED, Policy, SampleResult, accuracy

from runlines import results

# An older run's folder: one sample its agent answered with an invented default (matching the label, so the old
# line says correct) and one answered wrong by the model.
OLD_LINES = [{"id": "s0", "position": 0, "label": "yes", "answer": "yes", "agent": INVENTED, "correct": True},
             {"id": "s1", "position": 1, "label": "yes", "answer": "no", "agent": "main", "correct": False}]


@pytest.fixture
def old_run(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"task": 1}))
    (folder / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in OLD_LINES))
    return folder


def test_the_page_the_json_and_the_csv_of_an_old_run_say_the_same_numbers(old_run, capsys):
    assert main(["report", str(old_run), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    totals = json.loads((old_run / "report" / "summary.json").read_text())["totals"]  # the file beside the page
    assert printed["totals"] == totals
    page = " ".join((old_run / "report" / "index.html").read_text().split())
    # the invented answer is a failure everywhere, and never a right answer
    assert (totals["failed"], totals["right"], totals["scored"], totals["accuracy"]) == (1, 0, 1, 0.0)
    assert totals["accuracy_failures_as_wrong"] == 0.0
    assert "answered by main / rescue / failed</th><td>1 / 0 / 1" in page
    assert "0.0% [0.0%–79.3%] (0 right of 1 answered and labelled)" in page
    assert "accuracy counting failures as wrong</th><td>0.0% [0.0%–65.8%]" in page
    rows = list(csv.DictReader((old_run / "report" / "samples.csv").open()))
    assert [(r["answer"], r["correct"], r["error_kind"]) for r in rows] == [("", "", "no_answer"), ("no", "False", "")]


def test_a_comparison_reads_the_invented_answer_as_a_failure(old_run):
    comparison = compare_runs(old_run, old_run)
    assert comparison.overall.a == (0, 1, 1)  # right, scored, failed
    assert [row.to_json()["a"]["accuracy"] for row in comparison.rows if row.grouping == "all"] == [0.0]


@pytest.mark.parametrize(("policy", "expected"), [(Policy.EXCLUDED, (1, 2)), (Policy.WRONG, (1, 4))])
def test_accuracy_counts_answered_labelled_samples_and_failures_only_under_its_policy(policy, expected):
    lines = [{"id": "right", "label": "a", "answer": "a", "agent": "main", "correct": True},
             {"id": "wrong", "label": "a", "answer": "b", "agent": "rescue", "correct": False},
             {"id": "failed", "label": "a", "answer": None, "agent": None, "error_kind": "timeout"},
             {"id": "invented", "label": "a", "answer": "a", "agent": INVENTED, "correct": True},
             {"id": "unlabelled", "label": None, "answer": "a", "agent": "main", "correct": None},
             {"id": "unlabelled-failed", "label": None, "answer": None, "agent": None}]
    found = accuracy(results(lines), policy)
    assert (found.right, found.counted, found.policy) == (*expected, policy)
    assert found.value == expected[0] / expected[1]
    assert accuracy([], policy).value is None


def test_each_outcome_is_made_one_way_and_written_whole():
    facts = SampleResult.of_sample("s0", label="yes", position=3, question="Same length?")
    answered = facts.with_answer("yes", "main", True, rounds=2)
    failed = facts.with_failure("timeout", "main: timed out", reply="I think yes")
    assert (answered.failed, answered.right, answered.error_kind) == (False, True, None)
    assert (failed.failed, failed.answer, failed.correct, failed.failure, failed.reply) == (
        True, None, None, "timeout", "I think yes")
    line = failed.to_json()
    assert SampleResult.from_json(line) == failed and line["error_kind"] == "timeout"
    assert set(line) == set(answered.to_json())  # every field, whatever the outcome
    with pytest.raises(ValueError, match="needs an answer and the agent that gave it"):
        facts.with_answer("yes", INVENTED, True)
