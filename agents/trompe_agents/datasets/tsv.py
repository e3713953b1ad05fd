"""VLMEvalKit TSV files (open-compass/VLMEvalKit vlmeval/dataset/image_base.py `load_data`/`dump_image`, and
image_mcq.py `build_prompt`, commit e8e78f0): tab-separated rows `index, image, question, A, B, ..., answer,
category` (+ optional `hint`, `l2-category`, `image_path`).

`image` is a base64 image, a list of them written as "['...', '...']", or another row's `index` (VLMEvalKit
stores a shared image once), so indices must be unique; images are written out like parquet ones, each named by
its content's digest (`--images-root`, else a cache folder).
The option columns A-H present in a row are its choices and `answer` is then their letter; rows without options
keep `answer` as it is (e.g. "Yes"/"No"). A `hint` is put before the question as VLMEvalKit's prompt does.
"""

from __future__ import annotations

import ast
import base64
import binascii
import csv
import sys
from pathlib import Path

from .base import DatasetError, ListDataset, Sample
from .benchmark import Benchmark
from .forms import LETTERS, normalise
from .files import require_columns
from .parquet import images_folder, write_image
from .splits import check_no_split

COLUMNS = ["index", "question"]
NAME = "vlmevalkit"
FIELD_LIMIT = min(sys.maxsize, 2**31 - 1)  # a base64 image is one field of many megabytes


def read_tsv(path: Path) -> list[dict[str, str]]:
    """The rows as dicts (VLMEvalKit writes them with pandas: tab-separated, double quotes where needed)."""
    csv.field_size_limit(FIELD_LIMIT)
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter="\t")
        require_columns(reader.fieldnames or [], COLUMNS, str(path))
        return list(reader)


def _images(value: str, by_index: dict[str, str], where: str) -> list[bytes]:
    """Decoded image bytes: one base64 image, a list of them, or the images of the row `value` names."""
    text = (value or "").strip()
    if text in by_index and by_index[text].strip() != text:
        text = by_index[text].strip()
    encoded = ast.literal_eval(text) if text.startswith("[") and text.endswith("]") else [text]
    try:
        return [base64.b64decode(item, validate=True) for item in encoded if str(item).strip()]
    except (binascii.Error, ValueError, TypeError):
        raise DatasetError(f"{where}: 'image' is not base64 image data (nor another row's index)") from None


def _answer(row: dict[str, str], choices: list[str], where: str) -> str | None:
    raw = (row.get("answer") or "").strip()
    if not raw:
        return None
    if choices:
        letter = raw.strip("()").upper()
        if letter not in LETTERS[:len(choices)]:
            raise DatasetError(f"{where}: answer {raw!r} is not one of the {len(choices)} option letters")
        return letter
    try:
        return normalise("auto", raw)
    except ValueError:
        raise DatasetError(f"{where}: answer {raw!r} cannot be read") from None


def check_unique_indices(rows: list[dict[str, str]], path: Path) -> None:
    """Refuse a repeated `index`: it is the sample's id, and a row's `image` may name another row by it."""
    first: dict[str, int] = {}
    for line, row in enumerate(rows, 2):
        index = str(row["index"])
        if index in first:
            raise DatasetError(f"{path}: line {line}: index {index!r} repeats line {first[index]}'s; each row needs "
                               "its own index (it is the sample's id, and other rows name their image by it)")
        first[index] = line


def load_tsv(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    check_no_split(split, "VLMEvalKit TSV", path)
    rows = read_tsv(path)
    check_unique_indices(rows, path)
    by_index = {str(row["index"]): row.get("image") or "" for row in rows}
    folder = images_folder(images_root, NAME, path) if any(by_index.values()) else None
    samples = []
    for line, row in enumerate(rows, 2):
        index = str(row["index"])
        where = f"{path}: line {line} (index {index!r})"
        images = []
        if folder is not None and row.get("image"):
            images = [write_image(data, folder, f"{where}, image") for data in _images(row["image"], by_index, where)]
        choices = [row[k].strip() for k in LETTERS if (row.get(k) or "").strip()]
        hint = (row.get("hint") or "").strip()
        question = f"Hint: {hint}\n{row['question']}" if hint and hint.lower() != "nan" else row["question"]
        metadata = {k: v for k, v in row.items() if k not in ("image", "question", *LETTERS) and v}
        samples.append(Sample(id=index, images=images, question=question, answer=_answer(row, choices, where),
                              choices=choices or None, category=row.get("category") or None,
                              metadata={**metadata, "index": index}))
    return ListDataset(path.stem, samples)


BENCHMARK = Benchmark(
    NAME, load_tsv, "A VLMEvalKit TSV of any benchmark (index, image, question, A-H, answer, category)",
    detect=lambda path, columns: path.suffix == ".tsv" and {"index", "question"} <= columns.names,
    answer_form="auto")
