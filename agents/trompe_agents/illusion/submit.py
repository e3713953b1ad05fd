"""Challenge submission files from a run's results, in dataset order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .runner import read_meta, read_results

FORMATS = ("datacv",)
CODES = {1: {"yes": "1", "no": "0"}, 2: {"A": "0", "B": "1", "C": "2", "D": "3"}}


def datacv_code(answer: str | None, task: int) -> str:
    """Task I yes/no -> 1/0, Task II A-D -> 0-3, -1 where there is no answer."""
    return CODES[task].get(answer or "", "-1")


def datacv_lines(records: list[dict[str, Any]], task: int) -> list[str]:
    """One `<index> <answer>` line per sample in dataset order."""
    ordered = sorted(records, key=lambda r: r.get("position", 0))
    return [f"{r.get('index', r['id'])} {datacv_code(r.get('answer'), task)}" for r in ordered]


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
    for position, (sample_id, index) in enumerate(meta.get("order", [])):
        records.setdefault(sample_id, {"id": sample_id, "index": index, "position": position, "answer": None})
    path = Path(out) if out else run_dir / f"submission_{fmt}_task{task}.txt"
    path.write_text("\n".join(datacv_lines(list(records.values()), task)) + "\n", encoding="utf-8")
    return path
