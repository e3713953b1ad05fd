"""Each benchmark's official numbers from a run's per-sample records, computed the way its harness does.

- HallusionBench, `official` (tianyi-lab/HallusionBench utils.py): a question scores 1 when right, 0 when
  wrong, 2 when no answer ("uncertain"); a text-only VS question (figure_id 0) also counts as right when
  uncertain (`assign_correctness`). aAcc: right / all questions (`get_eval_all`); qAcc: question groups
  category_subcategory_set_id_question_id with every question right (`get_eval_pair_all`); fAcc: figure groups
  category_subcategory_set_id_figure_id with every question right, VS figure 0 left out (`get_eval_fig`).
- HallusionBench, `lmms-eval` (lmms_eval/tasks/hallusion_bench/evaluate_hb.py, `hb_aggregation_result_intern`):
  "yes" in the answer means 1, anything else 0; the same groups, no uncertain rule, no figure left out.
- BlindTest (VLMsAreBlind/Benchmark, HF XAI/vlmsareblind): accuracy per task and their mean; circled letters
  compare without case, as the authors' analysis notebooks and lmms-eval do (`answers.same_answer`).
- BLINK (zeyofu/BLINK_Benchmark eval/evaluate.py): accuracy per subtask and their mean.
- Anything else: accuracy per category.

A sample whose run failed counts as answered wrong (no answer); samples without a label are never scored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .hallusionbench import KEYS as HALLUSION_KEYS

HALLUSION_VARIANTS = ("official", "lmms-eval")
RULES = {
    "hallusionbench/official": "tianyi-lab/HallusionBench utils.py (aAcc, qAcc, fAcc)",
    "hallusionbench/lmms-eval": "lmms-eval hallusion_bench evaluate_hb.py (yes-substring rule)",
    "blindtest": "VLMs Are Blind: accuracy per task, mean over tasks (circled letter without case)",
    "blink": "BLINK eval/evaluate.py: accuracy per subtask, mean over subtasks",
    "tet": "accuracy per task, mean over tasks",
}


@dataclass
class Metrics:
    """Headline numbers (0-1), a table of groups, and how many samples went into them."""

    rule: str
    headline: dict[str, float] = field(default_factory=dict)
    groups: list[tuple[str, float, int]] = field(default_factory=list)  # name, accuracy, samples
    scored: int = 0
    unscored: int = 0
    failed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "headline": self.headline, "scored": self.scored, "unscored": self.unscored,
                "failed": self.failed, "groups": [{"name": n, "accuracy": a, "samples": k} for n, a, k in self.groups]}


def metric_keys(metadata: dict[str, Any]) -> dict[str, Any]:
    """What a result record keeps of a sample's metadata for these metrics (HallusionBench's grouping keys)."""
    return {k: metadata[k] for k in HALLUSION_KEYS if k in metadata}


def _right(record: dict[str, Any]) -> bool:
    return bool(record.get("correct"))


def _grouped(records: list[dict[str, Any]], key) -> list[tuple[str, float, int]]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        groups[key(record)].append(_right(record))
    return [(name, sum(v) / len(v), len(v)) for name, v in sorted(groups.items())]


def _all_right(records: list[dict[str, Any]], key, scores: dict[str, bool], skip=lambda r: False) -> float:
    groups: dict[str, bool] = {}
    for record in records:
        if not skip(record):
            name = key(record)
            groups[name] = groups.get(name, True) and scores[record["id"]]
    return sum(groups.values()) / len(groups) if groups else 0.0


def _join(record: dict[str, Any], *names: str) -> str:
    keys = record.get("keys") or {}
    return "_".join(str(keys.get(n)) for n in names)


def _no_figure(record: dict[str, Any]) -> bool:
    keys = record.get("keys") or {}
    return keys.get("category") == "VS" and str(keys.get("figure_id")) == "0"


def _hallusion_score(record: dict[str, Any], variant: str) -> bool:
    label, answer = record.get("label"), record.get("answer")
    if variant == "lmms-eval":
        return ("yes" if "yes" in str(answer or "").lower() else "no") == label
    if answer is None:  # uncertain: right only for a VS question shown no figure
        return _no_figure(record)
    return answer == label


def hallusionbench(records: list[dict[str, Any]], variant: str = "official") -> Metrics:
    if variant not in HALLUSION_VARIANTS:
        raise ValueError(f"--metric-variant must be one of {', '.join(HALLUSION_VARIANTS)}, got {variant!r}")
    scores = {r["id"]: _hallusion_score(r, variant) for r in records}
    pair = lambda r: _join(r, "category", "subcategory", "set_id", "question_id")  # noqa: E731
    figure = lambda r: _join(r, "category", "subcategory", "set_id", "figure_id")  # noqa: E731
    metrics = Metrics(RULES[f"hallusionbench/{variant}"])
    metrics.headline = {
        "aAcc": sum(scores.values()) / len(scores) if scores else 0.0,
        "qAcc": _all_right(records, pair, scores),
        "fAcc": _all_right(records, figure, scores, _no_figure if variant == "official" else lambda r: False)}
    by_sub: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        by_sub[_join(record, "category", "subcategory")].append(scores[record["id"]])
    metrics.groups = [(name, sum(v) / len(v), len(v)) for name, v in sorted(by_sub.items())]
    return metrics


def per_group(records: list[dict[str, Any]], rule: str, mean_name: str) -> Metrics:
    """Accuracy per category and the mean over categories (BlindTest tasks, BLINK subtasks)."""
    metrics = Metrics(rule, groups=_grouped(records, lambda r: str(r.get("category") or "-")))
    if metrics.groups:
        metrics.headline = {mean_name: sum(a for _, a, _ in metrics.groups) / len(metrics.groups),
                            "accuracy": sum(map(_right, records)) / len(records)}
    return metrics


def benchmark_metrics(fmt: str | None, records: Iterable[dict[str, Any]], variant: str = "official") -> Metrics:
    """The benchmark's own numbers over the labelled records; unlabelled and failed ones are counted."""
    records = list(records)
    labelled = [r for r in records if r.get("label") is not None]
    if fmt == "hallusionbench":
        metrics = hallusionbench(labelled, variant)
    elif fmt == "blindtest":
        metrics = per_group(labelled, RULES["blindtest"], "mean over tasks")
    elif fmt == "blink":
        metrics = per_group(labelled, RULES["blink"], "mean over subtasks")
    else:
        metrics = per_group(labelled, RULES.get(fmt or "", "accuracy per category"), "mean over categories")
    metrics.scored = len(labelled)
    metrics.unscored = len(records) - len(labelled)
    metrics.failed = sum(1 for r in labelled if r.get("error_kind") == "run")
    return metrics


def summary_line(metrics: Metrics) -> str:
    """One line for the terminal: the headline numbers and what they cover."""
    numbers = ", ".join(f"{name} {value:.1%}" for name, value in metrics.headline.items()) or "nothing scored"
    return (f"{numbers} ({metrics.rule}); {metrics.scored} scored, {metrics.failed} of them failed, "
            f"{metrics.unscored} unlabelled (not scored)")
