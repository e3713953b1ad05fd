"""Official benchmark metrics from per-sample records, against numbers worked out by hand from each harness.

HallusionBench: tianyi-lab/HallusionBench utils.py (assign_correctness, get_eval_all, get_eval_pair_all,
get_eval_fig), and lmms-eval's hallusion_bench_image (the same rules on the image split). BlindTest: per task,
circled letters without case. BLINK: per subtask (zeyofu/BLINK_Benchmark eval/evaluate.py). Each harness's
rules in detail: tests/datasets/test_scorers.py.
"""

from __future__ import annotations

import pytest

from runlines import results
from trompe_agents.datasets import load_dataset
from trompe_agents.datasets.metrics import benchmark_metrics, metric_keys, summary_line
from trompe_agents.datasets.scorers import score
from trompe_agents.illusion.correctness import matches_label
from trompe_agents.records import SampleResult
from trompe_agents.testing.dataset_files import hallusion_items, hallusion_set_items, write_hallusionbench


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
                        "keys": keys, "agent": None if answer is None else "main",
                        "error_kind": "run" if answer is None else None})
    return records


def hallusionbench(records: list[dict], scorer: str = "official"):
    return benchmark_metrics("hallusionbench", results(records), scorer)


def test_hallusionbench_official_groups_pairs_and_figures():
    """All right except item 0: pair VD_0 (items 0, 1) fails, figure VD_0_0 fails; the rest hold."""
    answers = ["yes", "yes", "no", "yes", "no", "yes", "no", "yes"]  # gold: no yes no yes ...
    m = hallusionbench(hallusion_records(answers))
    assert m.headline == pytest.approx({"aAcc": 7 / 8, "qAcc": 5 / 6, "fAcc": 5 / 6})


@pytest.mark.parametrize("scorer", ["official", "lmms-eval", "vlmevalkit"])
def test_hallusionbench_groups_by_question_and_by_figure_within_a_set_not_by_set(tmp_path, scorer):
    """Two sets of two questions asked of two figures each, loaded from HallusionBench.json as a run loads it.
    Set 0's question 1 is answered wrong on figure 1, all else right: of the question groups (set, question) one
    of four fails (qAcc 3/4), of the figure groups (set, figure) one of four (fAcc 3/4); grouped by set alone
    either would be 1/2."""
    samples = list(load_dataset(write_hallusionbench(tmp_path, 0, hallusion_set_items(2))))
    records = []
    for sample in samples:
        keys = metric_keys(sample.metadata)
        wrong = (keys["set_id"], keys["question_id"], keys["figure_id"]) == ("0", "1", "1")
        answer = {"yes": "no", "no": "yes"}[sample.answer] if wrong else sample.answer
        records.append(SampleResult.of_sample(sample.id, label=sample.answer, keys=keys).with_answer(
            answer, "main", matches_label(answer, sample.answer, 1, None)))
    assert len(records) == 8 and sum(r.right for r in records) == 7
    assert benchmark_metrics("hallusionbench", records, scorer).headline == pytest.approx(
        {"aAcc": 7 / 8, "qAcc": 3 / 4, "fAcc": 3 / 4})


def test_hallusionbench_uncertain_counts_right_only_for_a_vs_question_without_figure():
    """lmms-eval's hallusion_bench_image runs the official rules on the image split (hallusion_bench_image.yaml
    test_split: image): items 3 and 7, the text-only VS questions, are not in it."""
    answers = ["no", "yes", None, None, "no", "yes", "no", "yes"]  # item 2 is VD, item 3 is VS figure 0
    official = hallusionbench(hallusion_records(answers))
    lmms = hallusionbench(hallusion_records(answers), "lmms-eval")
    assert official.headline["aAcc"] == pytest.approx(7 / 8)  # the VS one counts, the VD one does not
    assert official.headline["fAcc"] == pytest.approx(5 / 6)  # VS figure 0 is not a figure
    # image questions 0 1 2 4 5 6, only 2 (VD, no answer) wrong: pairs set0 set1 set2 set3 -> 3 / 4, figures 5 / 6
    assert lmms.headline == pytest.approx({"aAcc": 5 / 6, "qAcc": 3 / 4, "fAcc": 5 / 6})
    assert (lmms.scorer, official.scorer) == ("lmms-eval", "official")


def test_the_scorer_is_checked_naming_the_accepted_ones():
    with pytest.raises(ValueError, match="--scorer: hallusionbench offers official, lmms-eval, vlmevalkit"):
        hallusionbench([], "inspect")
    with pytest.raises(ValueError, match="--scorer: tet offers official; got 'lmms-eval'"):
        benchmark_metrics("tet", results([]), "lmms-eval")
    # `official` is offered by any set, but a set without a harness scorer has none to call
    with pytest.raises(ValueError, match=r"^jsonl: no harness scorer is registered for this format; formats with "
                                         r"one: blindtest, blink, hallusionbench, illusionvqa, vstar$"):
        score("jsonl", [])


def record(category: str, label: str | None, correct: bool | None, error: str | None = None) -> dict:
    """A result line as the illusion runner writes it: answered by the main agent, or failed with `error`."""
    answer = None if error else label if correct else "x"
    return {"id": f"{category}-{label}-{correct}-{error}", "category": category, "label": label,
            "answer": answer, "agent": None if error else "main", "correct": None if error else correct,
            "error_kind": error}


def test_blindtest_is_the_mean_over_tasks_and_unlabelled_rows_are_counted_not_scored():
    records = [record("CircledLetter", "o", True), record("CircledLetter", "k", False),
               record("NestedSquares", "3", True), record("NestedSquares", None, None),
               record("LineIntersections", "2", None, error="run")]
    m = benchmark_metrics("blindtest", results(records))
    assert m.groups == [("CircledLetter", 0.5, 2), ("LineIntersections", 0.0, 1), ("NestedSquares", 1.0, 1)]
    assert m.headline == pytest.approx({"mean over tasks": 0.5, "accuracy": 0.5})
    assert (m.scored, m.unscored, m.failed) == (4, 1, 1)
    assert "4 scored, 1 of them failed, 1 unlabelled (not scored)" in summary_line(m)


def test_blink_is_the_mean_over_subtasks():
    records = [record("Jigsaw", "A", True)] * 3 + [record("Jigsaw", "B", False),
                                                   record("Relative_Depth", "A", False)]
    m = benchmark_metrics("blink", results(records))
    assert m.headline["mean over subtasks"] == pytest.approx((3 / 4 + 0) / 2)
    assert "BLINK eval/evaluate.py" in m.rule


@pytest.mark.parametrize("kind", ["invalid_answer", "max_rounds", "empty_reply", "auth", "run", None])
def test_every_failed_sample_is_counted_failed_whatever_its_kind(kind):
    """The run's two summary lines agree: `failed 6 (invalid_answer 6)` is followed by `6 scored, 6 of them
    failed` (metrics once counted only error_kind 'run' and printed '0 of them failed')."""
    from trompe_agents.illusion.stats import summary

    records = [{**record("Jigsaw", "A", None, error=kind or "run"), "id": f"s{i}", "error_kind": kind}
               for i in range(6)] + [record("Jigsaw", "B", True)]
    m = benchmark_metrics("blink", results(records))
    assert (m.scored, m.failed) == (7, 6)
    assert "7 scored, 6 of them failed" in summary_line(m)
    assert f"failed 6 ({kind or 'no_answer'} 6)" in summary(results(records))
    assert m.headline["accuracy"] == pytest.approx(1 / 7)  # a failure counts as wrong


def test_an_old_runs_invented_default_answer_is_a_failure():
    old = {**record("Jigsaw", "A", True), "agent": "default"}  # runs before the rescue agent invented one
    m = benchmark_metrics("blink", results([old]))
    assert m.failed == 1 and m.headline["accuracy"] == 0.0


def test_a_set_without_a_harness_scorer_is_accuracy_per_category_and_their_mean():
    """TeT's rule; any other set (a probe set, DataCV with labels) reads the same per category, '-' for none. A
    failed sample counts as answered wrong; an unlabelled one is counted and never scored."""
    records = [{"id": "a1", "category": "a", "label": "yes", "answer": "yes", "agent": "main", "correct": True},
               {"id": "a2", "category": "a", "label": "no", "answer": "yes", "agent": "main", "correct": False},
               {"id": "a3", "category": "a", "label": "no", "answer": None, "agent": None, "correct": None,
                "error_kind": "timeout"},
               {"id": "b1", "category": "b", "label": "yes", "answer": "yes", "agent": "main", "correct": True},
               {"id": "n1", "label": "yes", "answer": "yes", "agent": "main", "correct": True},
               {"id": "u1", "category": "a", "label": None, "answer": "yes", "agent": "main", "correct": None},
               {"id": "u2", "category": "b", "label": None, "answer": "no", "agent": "main", "correct": None}]
    tet = benchmark_metrics("tet", results(records))
    assert tet.as_dict() == {
        "scorer": "official", "rule": "accuracy per task, mean over tasks",
        "headline": {"mean over categories": pytest.approx((1 / 3 + 1 + 1) / 3), "accuracy": 3 / 5},
        "scored": 5, "unscored": 2, "failed": 1,
        "groups": [{"name": "-", "accuracy": 1.0, "samples": 1}, {"name": "a", "accuracy": 1 / 3, "samples": 3},
                   {"name": "b", "accuracy": 1.0, "samples": 1}]}
    probes = benchmark_metrics("probes", results(records))
    assert probes.rule == "accuracy per category" and probes.groups == tet.groups
    assert summary_line(probes) == ("mean over categories 77.8%, accuracy 60.0% (scorer official: accuracy per "
                                    "category); 5 scored, 1 of them failed, 2 unlabelled (not scored)")
    nothing = benchmark_metrics(None, results(records[5:]))
    assert summary_line(nothing) == ("nothing scored (scorer official: accuracy per category); 0 scored, 0 of them "
                                     "failed, 2 unlabelled (not scored)")
    assert benchmark_metrics(None, results([])).as_dict()["groups"] == []


def test_a_record_keeps_the_scorers_keys_of_the_metadata_and_nothing_else():
    """What the runner stores as a record's `keys`: HallusionBench's grouping keys, BlindTest's task and gold,
    HallusionBench's reference answer; a key the sample lacks stays absent, the rest of the metadata is left out."""
    metadata = {"category": "VD", "set_id": "0", "figure_id": "1", "task": "Counting", "groundtruth": "{3}",
                "gt_answer_details": "three", "filename": "VD/0_1.png", "sample_note": "hand-made"}
    assert metric_keys(metadata) == {"category": "VD", "set_id": "0", "figure_id": "1", "task": "Counting",
                                     "groundtruth": "{3}", "gt_answer_details": "three"}
    assert metric_keys({"filename": "a.png"}) == {}
