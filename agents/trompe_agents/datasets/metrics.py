"""A run's benchmark numbers: the chosen scorer's headline and groups (scorers.py: `official`, the default, and
`lmms-eval` / `vlmevalkit` where those harnesses score differently), with the counts every summary shows.

Sets no harness scores (TeT, probe sets, DataCV with labels) get accuracy per category and their mean.

A sample no model answered (records.SampleResult.failed: an error of any kind, an invalid answer, no answer
within the rounds) counts as answered wrong and is counted as failed; samples without a label are never scored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..records import SampleResult
from .hallusionbench import KEYS as HALLUSION_KEYS
from .scorers import OFFICIAL, check, registered_scorers, score

RULES = {"tet": "accuracy per task, mean over tasks"}


@dataclass
class Metrics:
    """Headline numbers (0-1), a table of groups, and how many samples went into them."""

    rule: str
    headline: dict[str, float] = field(default_factory=dict)
    groups: list[tuple[str, float, int]] = field(default_factory=list)  # name, accuracy, samples
    scored: int = 0
    unscored: int = 0
    failed: int = 0
    scorer: str = OFFICIAL  # the harness whose numbers these are (scorers.registered_scorers)

    def as_dict(self) -> dict[str, Any]:
        return {"scorer": self.scorer, "rule": self.rule, "headline": self.headline, "scored": self.scored,
                "unscored": self.unscored, "failed": self.failed,
                "groups": [{"name": n, "accuracy": a, "samples": k} for n, a, k in self.groups]}


SCORER_KEYS = ("task", "groundtruth")  # BlindTest's own task name and gold text, as the harness scorers read them


def metric_keys(metadata: dict[str, Any]) -> dict[str, Any]:
    """What a result record keeps of a sample's metadata for these metrics (HallusionBench's grouping keys,
    BlindTest's HF task name and raw gold answer)."""
    return {k: metadata[k] for k in (*HALLUSION_KEYS, *SCORER_KEYS) if k in metadata}


def _right(record: dict[str, Any]) -> bool:
    return SampleResult.from_json(record).right


def _grouped(records: list[dict[str, Any]], key) -> list[tuple[str, float, int]]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        groups[key(record)].append(_right(record))
    return [(name, sum(v) / len(v), len(v)) for name, v in sorted(groups.items())]


def per_group(records: list[dict[str, Any]], rule: str, mean_name: str) -> Metrics:
    """Accuracy per category and the mean over categories (BlindTest tasks, BLINK subtasks)."""
    metrics = Metrics(rule, groups=_grouped(records, lambda r: str(r.get("category") or "-")))
    if metrics.groups:
        metrics.headline = {mean_name: sum(a for _, a, _ in metrics.groups) / len(metrics.groups),
                            "accuracy": sum(map(_right, records)) / len(records)}
    return metrics


def benchmark_metrics(fmt: str | None, records: Iterable[dict[str, Any]], scorer: str = OFFICIAL) -> Metrics:
    """The named scorer's numbers over the labelled records; unlabelled and failed ones are counted."""
    records = list(records)
    labelled = [r for r in records if r.get("label") is not None]
    check(fmt, scorer)
    if fmt in registered_scorers():
        found = score(fmt, labelled, scorer)
        metrics = Metrics(found.rule, found.headline, found.groups, scorer=found.scorer)
    else:
        metrics = per_group(labelled, RULES.get(fmt or "", "accuracy per category"), "mean over categories")
    metrics.scored = len(labelled)
    metrics.unscored = len(records) - len(labelled)
    metrics.failed = sum(SampleResult.from_json(r).failed for r in labelled)
    return metrics


def summary_line(metrics: Metrics) -> str:
    """One line for the terminal: the headline numbers and what they cover."""
    numbers = ", ".join(f"{name} {value:.1%}" for name, value in metrics.headline.items()) or "nothing scored"
    return (f"{numbers} (scorer {metrics.scorer}: {metrics.rule}); {metrics.scored} scored, {metrics.failed} of "
            f"them failed, {metrics.unscored} unlabelled (not scored)")
