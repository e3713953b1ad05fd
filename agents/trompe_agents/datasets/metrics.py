"""A run's benchmark numbers: the chosen scorer's headline and groups (scorers.py: `official`, the default, and
`lmms-eval` / `vlmevalkit` where those harnesses score differently), with the counts every summary shows.

Sets no harness scores (TeT, probe sets, DataCV with labels) get accuracy per category and their mean.

A sample no model answered (records.SampleResult.failed: an error of any kind, an invalid answer, no answer
within the rounds) counts as answered wrong and is counted as failed; samples without a label are never scored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..messages import Usage
from ..records import SampleResult
from .benchmarks import benchmarks
from .scorers import OFFICIAL, check, registered_scorers, score


@dataclass
class Metrics:
    """Headline numbers (0-1), a table of groups, and how many samples went into them."""

    rule: str
    headline: dict[str, float] = field(default_factory=dict)
    groups: list[tuple[str, float, int]] = field(default_factory=list)  # name, accuracy, samples
    scored: int = 0  # the labelled samples the scorer read (a harness may read a subset: HallusionBench's image split)
    unscored: int = 0  # samples without a label, never scored
    failed: int = 0  # of the scored samples, those no model answered (each a wrong reply)
    scorer: str = OFFICIAL  # the harness whose numbers these are (scorers.registered_scorers)

    @property
    def right(self) -> int:
        """Right replies over the groups' samples (accuracy times samples, summed)."""
        return round(sum(accuracy * n for _, accuracy, n in self.groups))

    def as_dict(self) -> dict[str, Any]:
        return {"scorer": self.scorer, "rule": self.rule, "headline": self.headline, "scored": self.scored,
                "unscored": self.unscored, "failed": self.failed,
                "groups": [{"name": n, "accuracy": a, "samples": k} for n, a, k in self.groups]}


def metric_keys(metadata: dict[str, Any]) -> dict[str, Any]:
    """What a result record keeps of a sample's metadata for the benchmarks' scorers and judges
    (`Benchmark.record_keys`: HallusionBench's grouping keys and reference answer, BlindTest's HF task name and
    raw gold answer)."""
    wanted = {k: None for b in benchmarks().values() for k in b.record_keys}
    return {k: metadata[k] for k in wanted if k in metadata}


# what a result record holds that no scorer reads (the agent's reasoning, tool calls, token counts, file paths, the
# line it was read from): emptied in the records kept for a harness scorer, so scoring 100k records holds the few
# fields it needs
UNSCORED = {"reasons": "", "tool_calls": [], "refused_calls": [], "unknown_calls": [], "roles": {}, "usage": Usage(),
            "stops": {}, "images": [], "trace": None, "source": None}


def per_group(groups: dict[str, list[int]], rule: str, mean_name: str) -> Metrics:
    """Accuracy per category and the mean over categories (BlindTest tasks, BLINK subtasks), from each
    category's [right, samples] counts."""
    metrics = Metrics(rule, groups=[(name, right / n, n) for name, (right, n) in sorted(groups.items())])
    if metrics.groups:
        metrics.headline = {mean_name: sum(a for _, a, _ in metrics.groups) / len(metrics.groups),
                            "accuracy": sum(right for right, _ in groups.values()) /
                            sum(n for _, n in groups.values())}
    return metrics


def benchmark_metrics(fmt: str | None, records: Iterable[SampleResult], scorer: str = OFFICIAL) -> Metrics:
    """The named scorer's numbers over the labelled records; unlabelled and failed ones are counted.

    The records are read once as they come (a run's summary streams them from results.jsonl): a set without a
    harness scorer keeps only counts per category, a harness scorer the labelled records less UNSCORED.
    `scored` and `failed` count the records the scorer read (all labelled ones unless its Score names fewer)."""
    check(fmt, scorer)
    harness = fmt in registered_scorers()
    labelled: list[SampleResult] = []
    failures: set[str] = set()
    groups: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    unscored = 0
    for record in records:
        if not record.labelled:
            unscored += 1
            continue
        if record.failed:
            failures.add(record.id)
        if harness:
            labelled.append(replace(record, **UNSCORED))
        else:
            counts = groups[str(record.category or "-")]
            counts[0] += record.right
            counts[1] += 1
    if harness:
        found = score(fmt, labelled, scorer)
        metrics = Metrics(found.rule, found.headline, found.groups, scorer=found.scorer)
        read = {r.id for r in labelled} if found.scored_ids is None else found.scored_ids
    else:
        benchmark = benchmarks().get(fmt or "")
        rule = benchmark.category_rule if benchmark is not None else "accuracy per category"
        metrics = per_group(groups, rule, "mean over categories")
        read = None
    metrics.unscored = unscored
    metrics.scored = sum(n for _, n in groups.values()) if read is None else len(read)
    metrics.failed = len(failures) if read is None else len(failures & read)
    return metrics


def summary_line(metrics: Metrics) -> str:
    """One line for the terminal: the headline numbers and what they cover."""
    numbers = ", ".join(f"{name} {value:.1%}" for name, value in metrics.headline.items()) or "nothing scored"
    return (f"{numbers} (scorer {metrics.scorer}: {metrics.rule}); {metrics.scored} scored, {metrics.failed} of "
            f"them failed, {metrics.unscored} unlabelled (not scored)")
