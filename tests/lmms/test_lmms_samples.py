"""lmms-eval samples logs read as result records, without lmms-eval installed (compare needs only the files).

The lines are written with the keys lmms-eval 0.7.3 logs for a generate_until doc (lmms_eval/evaluator.py
`_process_document_results`: doc_id, target, resps, filtered_resps, token_counts, doc_hash, then the task's
metrics; loggers/evaluation_tracker.py `save_results_samples` adds `input`, drops `arguments` and `doc`, and
flattens a one-request `filtered_resps` to the reply), with the metrics of lmms-eval's `mmstar` (a score that is
not right/wrong per item alone) and `blink` tasks.
"""

from __future__ import annotations

import json

import pytest

from trompe_agents.illusion.cli import main as illusion_agent
from trompe_agents.illusion.lmms_samples import read_samples_log


def log(path, replies: list[str], rights: list[bool], score: bool = False):
    lines = []
    for doc_id, (reply, right) in enumerate(zip(replies, rights)):
        line = {"doc_id": doc_id, "target": "(A)", "filtered_resps": reply, "token_counts": [None],
                "doc_hash": f"h{doc_id}", "input": f"Question {doc_id}?"}
        if score:
            line["average"] = {"question_id": doc_id, "category": "coarse", "score": 0.5}
        line["blink_acc"] = {"id": f"val_Jigsaw_{doc_id}", "sub_task": "Jigsaw", "is_correct": right}
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_right_or_wrong_comes_from_the_first_metric_that_says_it_and_an_empty_reply_is_a_failure(tmp_path):
    path = log(tmp_path / "20261205_samples_blink_jigsaw.jsonl", ["(A)", "", "B"], [True, False, False], score=True)
    meta, records = read_samples_log(path)
    assert meta["metric"] == "blink_acc" and meta["task"] == "blink_jigsaw"
    assert [records[i].correct for i in "012"] == [True, None, False]
    assert records["1"].answer is None and records["1"].failure == "no_answer"
    assert {r.category for r in records.values()} == {"Jigsaw"}
    with pytest.raises(ValueError, match="metric 'average' does not say right or wrong on every line; those "
                                         "that do: blink_acc"):
        read_samples_log(path, "average")


def test_a_log_whose_metrics_say_no_verdict_is_refused_naming_them(tmp_path):
    path = tmp_path / "x_samples_mmstar.jsonl"
    path.write_text(json.dumps({"doc_id": 0, "filtered_resps": "A", "doc_hash": "h", "average": {"score": 0.5}}))
    with pytest.raises(ValueError, match=r"none of its metrics \(average\) says right or wrong per item"):
        read_samples_log(path)


def test_compare_pairs_two_logs_on_doc_id_and_hash(tmp_path, capsys):
    a = log(tmp_path / "a_samples_blink_jigsaw.jsonl", ["(A)", "(A)", "(B)"], [True, True, False])
    b = log(tmp_path / "b_samples_blink_jigsaw.jsonl", ["(B)", "(A)", "(A)"], [False, True, True])
    assert illusion_agent(["compare", str(a), str(b), "--json"]) == 0
    comparison = json.loads(capsys.readouterr().out)
    assert comparison["mcnemar"]["pairs"] == 3 and comparison["mcnemar"]["a_only"] == 1
    assert [(f["id"], f["a"], f["b"]) for f in comparison["flips"]] == [("0", "right", "wrong"),
                                                                       ("2", "wrong", "right")]
    assert (tmp_path / "b_samples_blink_jigsaw-compare.html").is_file()


def test_the_compare_chart_names_each_log_by_the_model_folder_lmms_eval_wrote_it_in(tmp_path):
    """lmms-eval writes OUTPUT/<model>/<date>_samples_<task>.jsonl: the chart's legend names those models."""
    from trompe_agents.illusion.compare import compare_runs

    paths = []
    for model in ("trompe__claude-sonnet-4-5", "trompe__claude-sonnet-4-5__tools_none"):
        (tmp_path / model).mkdir()
        paths.append(log(tmp_path / model / "20261205_samples_blink_jigsaw.jsonl", ["(A)"], [True]))
    comparison = compare_runs(*paths)
    assert comparison.models() == ("A: trompe__claude-sonnet-4-5", "B: trompe__claude-sonnet-4-5__tools_none")
    assert "B: trompe__claude-sonnet-4-5__tools_none</text>" in comparison.chart()
