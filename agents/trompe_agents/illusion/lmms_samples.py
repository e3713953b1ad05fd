"""lmms-eval's samples logs (`--log_samples`: OUTPUT/<model>/<date>_samples_<task>.jsonl) read as result records,
so `illusion-agent compare` pairs two lmms-eval runs (with and without tools) as it pairs two trompe runs.

Each line of a log holds `doc_id`, `doc_hash`, `target`, `filtered_resps` (the reply as scored), `input` and the
task's metrics as `process_results` returned them (lmms_eval/evaluator.py `_process_document_results`, 0.7.3).
Right or wrong is read from one metric: a bool, a 0/1 number, or a dict whose `is_correct` is one (BLINK's
`blink_acc`, BlindTest's `accuracy_by_task`); the first metric that reads so on every line, unless named. An empty
reply (what `--model trompe` returns when the agent has no answer) is a failed sample, counted apart as in a
trompe run, never as an answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..failures import ErrorKind
from ..records import SampleResult

# the keys lmms-eval writes on every samples line besides the task's metrics
LOGGED = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "token_counts", "doc_hash",
          "input_media", "input"}
GROUP_KEYS = ("sub_task", "task", "category")  # where a metric's dict names the item's group (its category)


def is_samples_log(path: Path) -> bool:
    """Whether `path` is an lmms-eval samples log rather than a trompe run folder."""
    return path.is_file() and path.suffix == ".jsonl" and "_samples_" in path.name


def verdict(value: Any) -> bool | None:
    """Right or wrong as a metric value says it; None when it does not say (a score, a text)."""
    if isinstance(value, dict):
        value = value.get("is_correct")
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    return None


def _reply(line: dict[str, Any]) -> str | None:
    reply = line.get("filtered_resps")
    while isinstance(reply, list) and len(reply) == 1:
        reply = reply[0]
    return reply if isinstance(reply, str) and reply.strip() else None


def read_samples_log(path: Path, metric: str | None = None) -> tuple[dict[str, Any], dict[str, SampleResult]]:
    """(meta, id -> record) of one samples log; ValueError when no metric tells right from wrong."""
    lines = [json.loads(text) for text in Path(path).read_text(encoding="utf-8").splitlines() if text.strip()]
    if not lines:
        raise ValueError(f"{path}: an lmms-eval samples log with no lines")
    metrics = [key for key in lines[0] if key not in LOGGED]
    readable = [key for key in metrics if all(verdict(line.get(key)) is not None for line in lines)]
    if metric is not None and metric not in readable:
        raise ValueError(f"{path}: metric {metric!r} does not say right or wrong on every line; those that do: "
                         f"{', '.join(readable) or 'none'}")
    if not readable:
        raise ValueError(f"{path}: none of its metrics ({', '.join(metrics) or 'none'}) says right or wrong per "
                         "item (a bool, 0/1, or a dict with is_correct)")
    chosen = metric or readable[0]
    task = path.stem.split("_samples_", 1)[1]
    records = {}
    for position, line in enumerate(lines):
        reply = _reply(line)
        details = [line[key] for key in (chosen, *metrics) if isinstance(line.get(key), dict)]
        group = next((d[k] for d in details for k in GROUP_KEYS if isinstance(d.get(k), str)), task)
        facts = SampleResult.of_sample(str(line["doc_id"]), position=position, label=str(line.get("target")),
                                       category=group, content=line.get("doc_hash"))
        records[facts.id] = (facts.with_failure(ErrorKind.NO_ANSWER, None) if reply is None
                             else facts.with_answer(reply, "lmms-eval", verdict(line[chosen]), reply=reply))
    return {"task": task, "metric": chosen, "log": str(path)}, records
