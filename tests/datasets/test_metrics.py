"""Official benchmark metrics from per-sample records, against numbers worked out by hand from each harness.

HallusionBench: tianyi-lab/HallusionBench utils.py (assign_correctness, get_eval_all, get_eval_pair_all,
get_eval_fig) and lmms-eval's evaluate_hb.py (hb_aggregation_result_intern). BlindTest: per task, circled
letters without case. BLINK: per subtask (zeyofu/BLINK_Benchmark eval/evaluate.py).
"""

from __future__ import annotations

import pytest

from trompe_agents.datasets.metrics import benchmark_metrics, hallusionbench, summary_line
from trompe_agents.testing.dataset_files import hallusion_items


def hallusion_records(answers: list[str | None]) -> list[dict]:
    """Records for the writer's HallusionBench items, as the illusion runner stores them."""
    records = []
    for item, answer in zip(hallusion_items(len(answers)), answers, strict=True):
        label = "yes" if item["gt_answer"] == "1" else "no"
        keys = {k: item[k] for k in ("category", "subcategory", "visual_input", "set_id", "figure_id",
                                     "question_id")}
        records.append({"id": "_".join(keys[k] for k in ("category", "subcategory", "set_id", "figure_id",
                                                           "question_id")),
                        "label": label, "answer": answer, "correct": None if answer is None else answer == label,
                        "keys": keys, "error_kind": "run" if answer is None else None})
    return records


def test_hallusionbench_official_groups_pairs_and_figures():
    """All right except item 0: pair VD_0 (items 0, 1) fails, figure VD_0_0 fails; the rest hold."""
    answers = ["yes", "yes", "no", "yes", "no", "yes", "no", "yes"]  # gold: no yes no yes ...
    m = hallusionbench(hallusion_records(answers))
    assert m.headline == pytest.approx({"aAcc": 7 / 8, "qAcc": 5 / 6, "fAcc": 5 / 6})


def test_hallusionbench_uncertain_counts_right_only_for_a_vs_question_without_figure():
    answers = ["no", "yes", None, None, "no", "yes", "no", "yes"]  # item 2 is VD, item 3 is VS figure 0
    official = hallusionbench(hallusion_records(answers))
    lmms = hallusionbench(hallusion_records(answers), "lmms-eval")
    assert official.headline["aAcc"] == pytest.approx(7 / 8)  # the VS one counts, the VD one does not
    assert lmms.headline["aAcc"] == pytest.approx(7 / 8)  # no answer reads "no": right for VD, wrong for VS
    assert official.headline["fAcc"] == pytest.approx(5 / 6)  # VS figure 0 is not a figure
    assert lmms.headline["fAcc"] == pytest.approx(7 / 8)


def test_hallusionbench_variant_is_checked():
    with pytest.raises(ValueError, match="--metric-variant must be one of official, lmms-eval"):
        hallusionbench([], "vlmevalkit")


def record(category: str, label: str | None, correct: bool | None, error: bool = False) -> dict:
    return {"id": f"{category}-{label}-{correct}", "category": category, "label": label, "correct": correct,
            "error_kind": "run" if error else None}


def test_blindtest_is_the_mean_over_tasks_and_unlabelled_rows_are_counted_not_scored():
    records = [record("CircledLetter", "o", True), record("CircledLetter", "k", False),
               record("NestedSquares", "3", True), record("NestedSquares", None, None),
               record("LineIntersections", "2", None, error=True)]
    m = benchmark_metrics("blindtest", records)
    assert m.groups == [("CircledLetter", 0.5, 2), ("LineIntersections", 0.0, 1), ("NestedSquares", 1.0, 1)]
    assert m.headline == pytest.approx({"mean over tasks": 0.5, "accuracy": 0.5})
    assert (m.scored, m.unscored, m.failed) == (4, 1, 1)
    assert "4 scored, 1 of them failed, 1 unlabelled (not scored)" in summary_line(m)


def test_blink_is_the_mean_over_subtasks():
    records = [record("Jigsaw", "A", True)] * 3 + [record("Jigsaw", "B", False),
                                                   record("Relative_Depth", "A", False)]
    m = benchmark_metrics("blink", records)
    assert m.headline["mean over subtasks"] == pytest.approx((3 / 4 + 0) / 2)
    assert "BLINK eval/evaluate.py" in m.rule
