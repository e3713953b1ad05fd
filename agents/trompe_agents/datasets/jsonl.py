"""The generic dataset format: one JSON object per line, image paths relative to the file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .answer_types import parse
from .base import DatasetError, ListDataset, Sample
from .benchmark import Benchmark, Columns, SevexTask
from .files import read_json_lines, require_file
from .splits import check_no_split

PROBES_FILE = "probes.jsonl"
NAME = "jsonl"


def record(sample: Sample, root: Path) -> dict[str, Any]:
    """One line of the generic format; image paths are written relative to `root` (the file's folder)."""
    return {"id": sample.id, "images": [Path(os.path.relpath(p, root)).as_posix() for p in sample.images],
            "question": sample.question, "answer": sample.answer, "choices": sample.choices,
            "category": sample.category, "metadata": sample.metadata,
            **({"answer_type": sample.answer_type} if sample.answer_type else {})}


def write_jsonl(samples: list[Sample], path: Path) -> None:
    """Write samples in the generic format (UTF-8, one object per line)."""
    root = path.parent.resolve()
    with path.open("w", encoding="utf-8") as f:
        for sample in samples:
            f.write(json.dumps(record(sample, root), ensure_ascii=False) + "\n")


FIELD_TYPES = {"id": (str, int), "question": (str,), "answer": (str, int, type(None)),
               "category": (str, type(None)), "metadata": (dict, type(None)), "answer_type": (str, type(None))}


def check_types(row: dict[str, Any], where: str) -> None:
    """Fields of the wrong JSON type fail at load time, naming the line and field, not mid-run."""
    for key, types in FIELD_TYPES.items():
        if key in row and not isinstance(row[key], types) or isinstance(row.get(key), bool):
            raise DatasetError(f"{where}: field {key!r} has the wrong type ({type(row[key]).__name__})")
    if not isinstance(row["images"], list) or not row["images"] or \
            not all(isinstance(p, str) and p for p in row["images"]):
        raise DatasetError(f"{where}: 'images' must be a non-empty list of paths")
    choices = row.get("choices")
    if choices is not None and not (isinstance(choices, list) and all(isinstance(c, str) for c in choices)):
        raise DatasetError(f"{where}: 'choices' must be a list of option texts")


def _answer_type(value: str | None, where: str) -> str | None:
    """An optional `answer_type` ('integer', 'pair', 'choice:4', ...), checked at load time."""
    if value is None:
        return None
    try:
        return parse(value).describe()
    except ValueError as err:
        raise DatasetError(f"{where}: field 'answer_type': {err}") from None


def load_jsonl(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    """Read the generic format (a file, or a probe set's folder holding PROBES_FILE); `images_root` overrides the
    folder image paths are relative to."""
    check_no_split(split, "generic JSONL", path)
    path = lines_file(path)
    return ListDataset(path.stem, list(iter_jsonl(path, images_root)))


def lines_file(path: Path) -> Path:
    """The file of the generic format: `path`, or a probe set folder's PROBES_FILE."""
    return path / PROBES_FILE if path.is_dir() else path


def iter_jsonl(path: Path, images_root: Path | None = None) -> Iterator[Sample]:
    """The generic format's samples one at a time, each line checked as it is read (a FileDataset reads a large
    probe set this way, never whole)."""
    root = (images_root or path.parent).resolve()
    for where, row in read_json_lines(path):
        if not isinstance(row, dict):
            raise DatasetError(f"{where}: expected a JSON object, got {type(row).__name__}")
        for key in ("id", "images", "question"):
            if key not in row:
                raise DatasetError(f"{where}: missing field {key!r}")
        check_types(row, where)
        images = [require_file(root / p, f"{where} (id {row['id']!r}), image") for p in row["images"]]
        answer = row.get("answer")
        yield Sample(id=str(row["id"]), images=images, question=row["question"],
                     answer=None if answer is None else str(answer), choices=row.get("choices"),
                     category=row.get("category"), metadata=row.get("metadata") or {},
                     answer_type=_answer_type(row.get("answer_type"), where))


def detect(path: Path, columns: Columns) -> bool:
    """Every JSONL file no stricter rule claims, and a probe set's folder."""
    return path.suffix == ".jsonl" or path.is_dir() and (path / PROBES_FILE).is_file()


BENCHMARK = Benchmark(
    NAME, load_jsonl, "trompe's own probe sets (`trompe probes generate`): a folder with probes.jsonl",
    aliases=("probes",), detect=detect, detection_rank=3, answer_form="auto",
    sevex_tasks=(SevexTask("probes", "Yes/no questions about classic visual illusions and counterfactual variants; "
                           "judge the physical stimulus, not the impression.", "yes or no"),),
    inspect_task="probes")
