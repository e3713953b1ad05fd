"""DataCV 2026 illusion challenge: Task I CSV (yes/no as 1/0) and Task II JSON (four options A-D)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from .answers import normalise
from .base import DatasetError, ListDataset, Sample
from .files import read_json_list, require_columns, require_file

OPTION = re.compile(r"^\s*([A-D])[.)]\s*(.*)$")


def _answer(benchmark: str, value, where: str) -> str | None:
    if value in (None, ""):
        return None
    try:
        return normalise(benchmark, str(value))
    except ValueError:
        raise DatasetError(f"{where}: answer {value!r} is not a valid {benchmark} answer") from None


def load_datacv1(path: Path, images_root: Path | None = None) -> ListDataset:
    """Task I: `index,image_path,prompt` (+ optional `answer`); answers 1/0 become yes/no."""
    root = (images_root or path.parent).resolve()
    samples = []
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        require_columns(reader.fieldnames or [], ["index", "image_path", "prompt"], str(path))
        for line_no, row in enumerate(reader, 2):
            where = f"{path}: line {line_no} (index {row['index']!r})"
            image = require_file(root / row["image_path"], f"{where}, image_path")
            samples.append(Sample(id=str(row["index"]), images=[image], question=row["prompt"],
                                  answer=_answer("datacv1", row.get("answer") or row.get("label"), where),
                                  metadata={"image_path": row["image_path"]}))
    return ListDataset("datacv1", samples)


def parse_options(option, where: str) -> list[str]:
    """'A. long\\nB. short\\n...' (or a list of such lines) -> ['long', 'short', ...] in letter order."""
    lines = option if isinstance(option, list) else str(option).splitlines()
    found = {}
    for line in lines:
        if line.strip() and (m := OPTION.match(line)):
            found[m.group(1)] = m.group(2).strip()
    letters = sorted(found)
    if not letters or letters != list("ABCD"[:len(letters)]):
        raise DatasetError(f"{where}: 'option' must hold lines 'A. ...' to 'D. ...', got {option!r}")
    return [found[k] for k in letters]


def load_datacv2(path: Path, images_root: Path | None = None) -> ListDataset:
    """Task II: a JSON list of `image_name, Question, option` (+ optional `answer`); answers A-D."""
    root = (images_root or path.parent).resolve()
    items = read_json_list(path, "items")
    samples = []
    for i, item in enumerate(items):
        item_id = str(item.get("id", item.get("index", i))) if isinstance(item, dict) else str(i)
        where = f"{path}: item {i} (id {item_id!r})"
        require_columns(item if isinstance(item, dict) else [], ["image_name", "Question", "option"], where)
        image = require_file(root / item["image_name"], f"{where}, image_name")
        samples.append(Sample(id=item_id, images=[image], question=item["Question"],
                              answer=_answer("datacv2", item.get("answer"), where),
                              choices=parse_options(item["option"], where),
                              metadata={"image_name": item["image_name"]}))
    return ListDataset("datacv2", samples)
