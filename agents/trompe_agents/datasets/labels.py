"""Join answers from a label file onto an unlabelled set (e.g. DataCV test items scored offline).

A row joins its sample by id and, where the file carries content, by content too: a `question` column must match
the sample's question (whitespace aside) and an `image_sha256` (or `sha256`, `image_hash`) column the sha256 of its
first image (the full hex digest or its first 8+ digits). A row whose content differs is never joined: its sample
stays unlabelled and is counted under `label_mismatch`; when no row matches, the file is for another set and is
refused. A `.txt` file and a `{id: answer}` JSON object carry no content and join on id alone.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from .answers import normalise
from .base import DatasetError, ListDataset, Sample
from .content import Cache, file_sha

ID_KEYS = ("id", "index", "idx", "image_name")
ANSWER_KEYS = ("answer", "label", "gt_answer", "groundtruth")
QUESTION_KEYS = ("question",)
IMAGE_HASH_KEYS = ("image_sha256", "sha256", "image_hash")
HEX_PREFIX = re.compile(r"[0-9a-f]{8,64}")
Row = dict[str, str]  # 'answer', and 'question' / 'image_sha256' where the file has them


def _rows(path: Path, text: str) -> list[dict] | dict:
    """The file's rows as parsed: CSV and JSONL a list of objects, JSON a list or one {id: answer} object."""
    if path.suffix == ".csv":
        return list(csv.DictReader(text.splitlines()))
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def read_labels(path: Path) -> dict[str, Row]:
    """id -> {'answer': raw, and the content columns it has} from CSV (header with id/index and answer/label), JSON
    ({id: answer} or a list of objects), JSONL, or a DataCV submission-style .txt of `<id> <answer>` lines."""
    if not path.is_file():
        raise DatasetError(f"labels: file not found: {path}")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".txt":
        pairs = [line.split(maxsplit=1) for line in text.splitlines() if line.strip()]
        bad = next((n for n, p in enumerate(pairs, 1) if len(p) != 2), None)
        if bad:
            raise DatasetError(f"{path}: line {bad}: expected '<id> <answer>'")
        return {k: {"answer": v.strip()} for k, v in pairs}
    rows = _rows(path, text)
    if isinstance(rows, dict):
        return {str(k): {"answer": str(v)} for k, v in rows.items()}
    fields = list(rows[0]) if rows else []
    id_key = next((k for k in ID_KEYS if k in fields), None)
    answer_key = next((k for k in ANSWER_KEYS if k in fields), None)
    if id_key is None or answer_key is None:
        missing = "an id column (id/index/idx)" if id_key is None else "an answer column (answer/label)"
        raise DatasetError(f"{path}: missing {missing} (found: {', '.join(fields) or 'none'})")
    content = {name: next((k for k in keys if k in fields), None)
               for name, keys in (("question", QUESTION_KEYS), ("image_sha256", IMAGE_HASH_KEYS))}
    return {str(row[id_key]): {"answer": str(row[answer_key]),
                               **{name: str(row[key]) for name, key in content.items()
                                  if key and row.get(key) not in (None, "")}}
            for row in rows}


def label_answer(benchmark: str, raw: str, choices: list[str] | None) -> str:
    """Normalise a label; multiple-choice labels may also be 0-based indices (DataCV submission style)."""
    if choices and raw.strip().isdigit() and int(raw) < len(choices):
        return "ABCDEFGH"[int(raw)]
    return normalise(benchmark, raw)


def content_mismatch(row: Row, sample: Sample, cache: Cache) -> str | None:
    """Which content column of the row differs from the sample ('question', 'image_sha256'), or None."""
    if "question" in row and " ".join(row["question"].split()) != " ".join(sample.question.split()):
        return "question"
    if "image_sha256" in row:
        given = row["image_sha256"].strip().lower().removeprefix("sha256:")
        actual = file_sha(Path(sample.images[0]), cache) if sample.images else ""
        if not HEX_PREFIX.fullmatch(given) or not actual.startswith(given):
            return "image_sha256"
    return None


def join_labels(dataset: ListDataset, path: Path, benchmark: str) -> ListDataset:
    """Set each sample's answer from the label row of its id and content; an id the dataset lacks is an error
    naming it, a row with other content leaves its sample unlabelled (counted), a file matching nothing is refused."""
    labels = read_labels(path)
    by_id = {s.id: s for s in dataset.samples}
    unknown = [k for k in labels if k not in by_id]
    if unknown:
        raise DatasetError(f"{path}: label id {unknown[0]!r} matches no sample in {dataset.name} "
                           f"({len(unknown)} unknown ids)")
    cache: Cache = {}
    mismatched = {key: column for key, row in labels.items()
                  if (column := content_mismatch(row, by_id[key], cache)) is not None}
    if mismatched and len(mismatched) == len(labels):
        key, column = next(iter(mismatched.items()))
        raise DatasetError(f"{path}: no label row matches its sample's content (id {key!r}: another {column}); "
                           f"the file labels another version of {dataset.name}")
    for key, row in labels.items():
        if key in mismatched:
            continue
        sample = by_id[key]
        try:
            sample.answer = label_answer(benchmark, row["answer"], sample.choices)
        except ValueError:
            raise DatasetError(f"{path}: id {key!r}: label {row['answer']!r} is not a {benchmark} answer") from None
    if mismatched:
        dataset.counts["label_mismatch"] = len(mismatched)
    return dataset
