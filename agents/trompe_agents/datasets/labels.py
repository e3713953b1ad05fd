"""Join answers from a label file onto an unlabelled set (e.g. DataCV test items scored offline)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from .answers import normalise
from .base import DatasetError, ListDataset

ID_KEYS = ("id", "index", "idx", "image_name")
ANSWER_KEYS = ("answer", "label", "gt_answer", "groundtruth")


def read_labels(path: Path) -> dict[str, str]:
    """id -> raw answer from CSV (header with id/index and answer/label), JSON ({id: answer} or a list of
    objects), JSONL, or a DataCV submission-style .txt of `<id> <answer>` lines."""
    if not path.is_file():
        raise DatasetError(f"labels: file not found: {path}")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".txt":
        pairs = [line.split(maxsplit=1) for line in text.splitlines() if line.strip()]
        bad = next((n for n, p in enumerate(pairs, 1) if len(p) != 2), None)
        if bad:
            raise DatasetError(f"{path}: line {bad}: expected '<id> <answer>'")
        return {k: v.strip() for k, v in pairs}
    if path.suffix == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
    elif path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        rows = json.loads(text)
        if isinstance(rows, dict):
            return {str(k): str(v) for k, v in rows.items()}
    fields = list(rows[0]) if rows else []
    id_key = next((k for k in ID_KEYS if k in fields), None)
    answer_key = next((k for k in ANSWER_KEYS if k in fields), None)
    if id_key is None or answer_key is None:
        missing = "an id column (id/index/idx)" if id_key is None else "an answer column (answer/label)"
        raise DatasetError(f"{path}: missing {missing} (found: {', '.join(fields) or 'none'})")
    return {str(row[id_key]): str(row[answer_key]) for row in rows}


def label_answer(benchmark: str, raw: str, choices: list[str] | None) -> str:
    """Normalise a label; multiple-choice labels may also be 0-based indices (DataCV submission style)."""
    if choices and raw.strip().isdigit() and int(raw) < len(choices):
        return "ABCDEFGH"[int(raw)]
    return normalise(benchmark, raw)


def join_labels(dataset: ListDataset, path: Path, benchmark: str) -> ListDataset:
    """Set each sample's answer from the label file; an id the dataset lacks is an error naming it."""
    labels = read_labels(path)
    by_id = {s.id: s for s in dataset.samples}
    unknown = [k for k in labels if k not in by_id]
    if unknown:
        raise DatasetError(f"{path}: label id {unknown[0]!r} matches no sample in {dataset.name} "
                           f"({len(unknown)} unknown ids)")
    for key, raw in labels.items():
        sample = by_id[key]
        try:
            sample.answer = label_answer(benchmark, raw, sample.choices)
        except ValueError:
            raise DatasetError(f"{path}: id {key!r}: label {raw!r} is not a {benchmark} answer") from None
    return dataset
