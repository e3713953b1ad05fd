"""A run's results in the forms other tools read: one JSON summary and a CSV row per sample, beside the HTML.

The JSON holds, besides trompe's own numbers, a `lmms_eval` block shaped as lmms-eval writes its aggregated results
(`<date>_results.json` from EvolvingLMMs-Lab/lmms-eval, lmms_eval/loggers/evaluation_tracker.py
`save_results_aggregated`: "results" -> task -> "metric,filter" and "metric_stderr,filter", "n-samples" -> task ->
original/effective, "higher_is_better", "config" with the model), so scripts written for lmms-eval read it as is.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from trompe_kernel.version import __version__

from ..datasets.metrics import Metrics, benchmark_metrics
from ..records import Accuracy, Policy, SampleResult, accuracy, grouped
from ..runfolder import RunFolder
from .pricing import role_totals
from .stats import wilson

HARNESS = "trompe illusion-agent"
CSV_FILE, JSON_FILE = "samples.csv", "summary.json"
# the last three: the psychometric plots' x, its unit (per family) and the genuine/counterfactual split
CSV_COLUMNS = ("id", "category", "family", "answer", "gold", "correct", "error_kind", "rounds", "tools_used",
               "tokens", "cost", "magnitude", "magnitude_unit", "counterfactual")
# how reports, exports and comparisons group samples
GROUPINGS: list[tuple[str, Callable[[SampleResult], Any]]] = [
    ("all", lambda r: "all"), ("category", lambda r: r.category), ("family", lambda r: r.family),
    ("stimulus", lambda r: None if r.counterfactual is None
     else "counterfactual" if r.counterfactual else "genuine")]


def sample_row(record: SampleResult) -> dict[str, Any]:
    """One CSV row: empty cells where there is nothing (no label, no answer, no price), never a made-up value."""
    used = list(dict.fromkeys(record.tool_calls))  # executed calls, each tool once, in first-use order
    return {"id": record.id, "category": record.category, "family": record.family,
            "answer": None if record.failed else record.answer, "gold": record.label,
            "correct": record.correct if record.scored else None,
            "error_kind": str(record.failure) if record.failure else None, "rounds": record.rounds,
            "tools_used": ";".join(used), "tokens": record.tokens, "cost": record.cost,
            "magnitude": record.magnitude, "magnitude_unit": record.magnitude_unit,
            "counterfactual": record.counterfactual}


def samples_csv(records: Iterable[SampleResult]) -> str:
    """The per-sample table; `pandas.read_csv` reads `correct` as booleans with blanks as missing."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: "" if v is None else v for k, v in sample_row(record).items()})
    return buffer.getvalue()


def proportion(found: Accuracy) -> dict[str, Any]:
    """right/scored with its 95% Wilson interval; accuracy None when nothing was scored."""
    low, high = wilson(found.right, found.counted)
    return {"right": found.right, "scored": found.counted, "accuracy": found.value,
            "ci95": [low, high] if found.counted else None}


def group_table(records: Iterable[SampleResult], key) -> dict[str, dict[str, Any]]:
    """Accuracy over answered samples per group value, failures counted apart."""
    return {name: {"n": len(members), "failed": sum(r.failed for r in members), **proportion(accuracy(members))}
            for name, members in grouped(records, key).items()}


def task_name(meta: dict[str, Any]) -> str:
    """The name results are filed under: the dataset format and task, e.g. 'jsonl_task1'."""
    return f"{meta.get('format') or 'dataset'}_task{meta.get('task')}"


def stderr_of_mean(right: int, scored: int) -> float | None:
    """The sample standard error of a 0/1 mean, as lmms-eval reports `<metric>_stderr` (n - 1 in the variance)."""
    if scored < 2:
        return None
    p = right / scored
    return math.sqrt(p * (1 - p) / (scored - 1))


def lmms_eval_block(meta: dict[str, Any], records: list[SampleResult], metrics: Metrics) -> dict[str, Any]:
    """The chosen scorer's numbers in lmms-eval's aggregated-results shape (module docstring), counted as
    lmms-eval counts: every labelled sample the scorer reads, a failed one as a wrong reply (never left out);
    `accuracy_stderr` is the sample standard error of the item mean, as lmms-eval's `mean_stderr`."""
    name = task_name(meta)
    numbers = {f"{metric.replace(' ', '_')},none": value for metric, value in metrics.headline.items()}
    if "accuracy" in metrics.headline:
        numbers["accuracy_stderr,none"] = stderr_of_mean(metrics.right, metrics.scored)
    return {"results": {name: {"alias": name, **numbers}},
            "n-samples": {name: {"original": len(records), "effective": metrics.scored}},
            "higher_is_better": {name: {metric.replace(" ", "_"): True for metric in metrics.headline}},
            "config": {"model": meta.get("backend"), "model_args": f"model={meta.get('model')}",
                       "limit": None, "scorer": metrics.scorer, "harness": HARNESS, "harness_version": __version__}}


def summary(meta: dict[str, Any], records: list[SampleResult], scorer: str = "official",
            run_dir: Path | None = None) -> dict[str, Any]:
    """Everything the HTML report's tables say, as one JSON object (docs/illusion-agent.md, "Results out")."""
    failed = [r for r in records if r.failed]
    failures = Counter(str(r.failure) for r in failed)
    costs = [r.cost for r in records if r.tokens]
    totals = {"samples": len(records), "answered": len(records) - len(failed), "failed": len(failed),
              "failures": dict(failures.most_common()),
              **proportion(accuracy(records)),
              "accuracy_failures_as_wrong": accuracy(records, Policy.WRONG).value,
              "tokens": sum(r.tokens for r in records),
              "cost_usd": None if None in costs else round(sum((c or 0.0 for c in costs), 0.0), 6),
              "service_tiers": sorted({r.service_tier or "standard" for r in records}),
              "roles": role_totals(records)}
    metrics = benchmark_metrics(meta.get("format"), records, scorer)
    return {"harness": {"name": HARNESS, "version": __version__},
            "run": {"folder": str(run_dir) if run_dir else None, "created": meta.get("created"),
                    "task": meta.get("task"), "backend": meta.get("backend"), "model": meta.get("model"),
                    "dataset": meta.get("dataset"), "format": meta.get("format"), "run_key": meta.get("run_key"),
                    "trompe": meta.get("trompe"), "fingerprint": meta.get("fingerprint")},
            "totals": totals,
            "groups": {name: group_table(records, key) for name, key in GROUPINGS if name != "all"},
            "benchmark": metrics.as_dict(),
            "lmms_eval": lmms_eval_block(meta, records, metrics),
            "files": {"csv": f"report/{CSV_FILE}", "html": "report/index.html", "json": f"report/{JSON_FILE}"}}


def write_exports(out: RunFolder, records: list[SampleResult], data: dict[str, Any]) -> None:
    """report/samples.csv and report/summary.json, each written whole or not at all."""
    out.write_atomic(CSV_FILE, samples_csv(records))
    out.write_atomic(JSON_FILE, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
