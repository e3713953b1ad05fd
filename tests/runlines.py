"""Run folders in tests: results.jsonl as written (the latest JSON line per sample id, what users and other tools
read), records from hand-written lines, and a folder written by hand as a run leaves it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import json
from pathlib import Path
from typing import Any

from trompe_agents.illusion.results import read_results
from trompe_agents.records import SampleResult


def written(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Per sample id, its latest line as a JSON object (`SampleResult.to_json` of what the run reads back)."""
    return as_lines(read_results(run_dir))


def as_lines(records: Mapping[str, SampleResult]) -> dict[str, dict[str, Any]]:
    """A run's records (what `run_samples` returns) as the JSON lines they were written as."""
    return {sample_id: record.to_json() for sample_id, record in records.items()}


def result(line: Mapping[str, Any]) -> SampleResult:
    """The record of a JSON line built in a test (a scorer's or judge's input), as a run reads it."""
    return SampleResult.from_json(line)


def results(lines: Iterable[Mapping[str, Any]]) -> list[SampleResult]:
    """Records read from JSON lines built in a test, as a run reads its results.jsonl."""
    return [result(line) for line in lines]


def write_run(folder: Path, lines: list[dict[str, Any]], **meta: Any) -> Path:
    """A run folder as a run leaves it: run.json (Task I, with `meta`) and a results.jsonl line per dict, each
    at its position in the list unless it names one."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(json.dumps({"task": 1, **meta}))
    (folder / "results.jsonl").write_text("".join(json.dumps({"position": i, **line}) + "\n"
                                                  for i, line in enumerate(lines)))
    return folder
