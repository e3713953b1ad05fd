"""Challenge submission files from a run's results, in dataset order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..presets import sent_record
from ..records import SampleResult
from ..statefiles import write_atomic
from .identity import one_run
from .results import read_results
from .runmeta import read_meta

FORMATS = ("datacv",)
CODES = {1: {"yes": "1", "no": "0"}, 2: {"A": "0", "B": "1", "C": "2", "D": "3"}}


def datacv_code(answer: str | None, task: int) -> str:
    """Task I yes/no -> 1/0, Task II A-D -> 0-3, -1 where there is no answer."""
    return CODES[task].get(answer, "-1")


def datacv_lines(records: list[SampleResult], task: int) -> list[str]:
    """One `<index> <answer>` line per sample in dataset order; a failed sample (or an old invented default) gets
    the challenge's own "no answer" code -1."""
    ordered = sorted(records, key=lambda r: r.position)
    return [f"{r.id if r.index is None else r.index} {datacv_code(None if r.failed else r.answer, task)}"
            for r in ordered]


def write_submission(run_dir: Path, fmt: str = "datacv", out: Path | None = None) -> Path:
    """Write the submission next to the results (or to `out`); samples never run get -1 via the dataset."""
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    if "task" not in meta:
        raise ValueError(f"{run_dir}: no run.json with a task; is this a run directory?")
    task = int(meta["task"])
    records = read_results(run_dir)
    one_run(run_dir, list(records.values()))  # a submission is one model's answers
    for position, (sample_id, index) in enumerate(meta.get("order", [])):
        records.setdefault(sample_id, SampleResult.of_sample(sample_id, index=index, position=position))  # no answer
    path = Path(out) if out else run_dir / f"submission_{fmt}_task{task}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)  # e.g. a starter kit's folder not made yet
    write_atomic(path, "\n".join(datacv_lines(list(records.values()), task)) + "\n")  # a kill leaves old or new
    write_model_json(path.parent / MODEL_JSON, meta, run_dir)
    return path


MODEL_JSON = "model.json"


def write_model_json(path: Path, meta: dict[str, Any], run_dir: Path | None = None) -> Path:
    """The starter kit's model.json beside the predictions: the model's name and the run's parameters, then what
    the run's requests really sent (temperature, thinking, tier, output limit), its prompt hashes and its preset.

    Shape as the organisers' code writes it (ziplab/DDP src/task2.py, `model_info`: {"model", "parameters"}).
    """
    agent = next((i["agent"] for i in reversed(meta.get("invocations", [])) if i.get("agent")), {})
    parameters = {"backend": meta.get("backend"), **{k: v for k, v in agent.items() if k != "prompts"}}
    info = {"model": meta.get("model"), "parameters": parameters, **sent_record(run_dir, meta)}
    write_atomic(path, json.dumps(info, indent=2) + "\n")
    return path
