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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trompe_server.version import __version__

from ..datasets.metrics import benchmark_metrics
from ..messages import Usage
from ..records import SampleResult
from ..runfolder import RunFolder
from .pricing import role_totals
from .stats import answered, has_answer, wilson

HARNESS = "trompe illusion-agent"
CSV_FILE, JSON_FILE = "samples.csv", "summary.json"
CSV_COLUMNS = ("id", "category", "family", "answer", "gold", "correct", "error_kind", "rounds", "tools_used",
               "tokens", "cost")
# how reports, exports and comparisons group samples
GROUPINGS: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("all", lambda r: "all"), ("category", lambda r: r.get("category")), ("family", lambda r: r.get("family")),
    ("stimulus", lambda r: None if r.get("counterfactual") is None
     else "counterfactual" if r["counterfactual"] else "genuine")]


def tokens(record: dict[str, Any]) -> int:
    return Usage(**(record.get("usage") or {})).total


def sample_row(record: dict[str, Any]) -> dict[str, Any]:
    """One CSV row: empty cells where there is nothing (no label, no answer, no price), never a made-up value."""
    result = SampleResult.from_json(record)
    used = list(dict.fromkeys(record.get("tool_calls") or []))  # executed calls, each tool once, in first-use order
    return {"id": record["id"], "category": record.get("category"), "family": record.get("family"),
            "answer": record.get("answer") if has_answer(record) else None, "gold": record.get("label"),
            "correct": record.get("correct") if has_answer(record) else None,
            "error_kind": str(result.failure) if result.failure else None, "rounds": record.get("rounds") or 0,
            "tools_used": ";".join(used), "tokens": tokens(record), "cost": record.get("cost")}


def samples_csv(records: list[dict[str, Any]]) -> str:
    """The per-sample table; `pandas.read_csv` reads `correct` as booleans with blanks as missing."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: "" if v is None else v for k, v in sample_row(record).items()})
    return buffer.getvalue()


def proportion(right: int, scored: int) -> dict[str, Any]:
    """right/scored with its 95% Wilson interval; accuracy None when nothing was scored."""
    low, high = wilson(right, scored)
    return {"right": right, "scored": scored, "accuracy": right / scored if scored else None,
            "ci95": [low, high] if scored else None}


def grouped(records: list[dict[str, Any]], key) -> dict[str, dict[str, Any]]:
    """Accuracy over answered samples per group value, failures counted apart."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        value = key(record)
        if value is not None:
            groups.setdefault(str(value), []).append(record)
    table = {}
    for name in sorted(groups):
        members = groups[name]
        scored = [r for r in answered(members) if r.get("correct") is not None]
        table[name] = {"n": len(members), "failed": len(members) - len(answered(members)),
                       **proportion(sum(bool(r["correct"]) for r in scored), len(scored))}
    return table


def task_name(meta: dict[str, Any]) -> str:
    """The name results are filed under: the dataset format and task, e.g. 'jsonl_task1'."""
    return f"{meta.get('format') or 'dataset'}_task{meta.get('task')}"


def stderr_of_mean(right: int, scored: int) -> float | None:
    """The sample standard error of a 0/1 mean, as lmms-eval reports `<metric>_stderr` (n - 1 in the variance)."""
    if scored < 2:
        return None
    p = right / scored
    return math.sqrt(p * (1 - p) / (scored - 1))


def lmms_eval_block(meta: dict[str, Any], records: list[dict[str, Any]], totals: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers in lmms-eval's aggregated-results shape (module docstring)."""
    name = task_name(meta)
    right, scored = totals["right"], totals["scored"]
    labelled = scored + sum(r.get("label") is not None for r in records if not has_answer(r))
    return {"results": {name: {"alias": name, "accuracy,none": totals["accuracy"],
                               "accuracy_stderr,none": stderr_of_mean(right, scored),
                               "accuracy_failures_as_wrong,none": right / labelled if labelled else None}},
            "n-samples": {name: {"original": len(records), "effective": scored}},
            "higher_is_better": {name: {"accuracy": True, "accuracy_failures_as_wrong": True}},
            "config": {"model": meta.get("backend"), "model_args": f"model={meta.get('model')}",
                       "limit": None, "harness": HARNESS, "harness_version": __version__}}


def summary(meta: dict[str, Any], records: list[dict[str, Any]], scorer: str = "official",
            run_dir: Path | None = None) -> dict[str, Any]:
    """Everything the HTML report's tables say, as one JSON object (docs/illusion-agent.md, "Results out")."""
    done = answered(records)
    scored = [r for r in done if r.get("correct") is not None]
    failures = Counter(str(SampleResult.from_json(r).failure) for r in records if not has_answer(r))
    costs = [r.get("cost") for r in records if tokens(r)]
    totals = {"samples": len(records), "answered": len(done), "failed": len(records) - len(done),
              "failures": dict(failures.most_common()),
              **proportion(sum(bool(r["correct"]) for r in scored), len(scored)),
              "tokens": sum(tokens(r) for r in records),
              "cost_usd": None if None in costs else round(sum(c or 0.0 for c in costs), 6),
              "service_tiers": sorted({str(r.get("service_tier") or "standard") for r in records}),
              "roles": role_totals(records)}
    metrics = benchmark_metrics(meta.get("format"), records, scorer)
    return {"harness": {"name": HARNESS, "version": __version__},
            "run": {"folder": str(run_dir) if run_dir else None, "created": meta.get("created"),
                    "task": meta.get("task"), "backend": meta.get("backend"), "model": meta.get("model"),
                    "dataset": meta.get("dataset"), "format": meta.get("format"), "run_key": meta.get("run_key"),
                    "trompe": meta.get("trompe"), "fingerprint": meta.get("fingerprint")},
            "totals": totals,
            "groups": {name: grouped(records, key) for name, key in GROUPINGS if name != "all"},
            "benchmark": metrics.as_dict(),
            "lmms_eval": lmms_eval_block(meta, records, totals),
            "files": {"csv": f"report/{CSV_FILE}", "html": "report/index.html", "json": f"report/{JSON_FILE}"}}


def write_exports(out: RunFolder, records: list[dict[str, Any]], data: dict[str, Any]) -> None:
    """report/samples.csv and report/summary.json, each written whole or not at all."""
    out.write_atomic(CSV_FILE, samples_csv(records))
    out.write_atomic(JSON_FILE, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
