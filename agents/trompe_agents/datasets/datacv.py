"""DataCV 2026 illusion challenge: Task I CSV (yes/no as 1/0) and Task II JSON (options A-D).

Paths resolve as the organisers' code (ziplab/DDP src/task1.py, src/task2.py) does: Task I `image_path`
relative to the CSV's folder, Task II `image_name` under the image folder (`--images-root`), and a Task II
item's id is the number in its image name ("17.jpg" -> 17), so a subset or shard keeps its real ids. A
missing image fails only that sample (submission code -1); the load counts it.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from .base import DatasetError, ListDataset, Sample
from .benchmark import Benchmark
from .files import read_json_list, require_columns
from .forms import normalise
from .options import dot_options

TASK_I_NAME, TASK_II_NAME = "datacv1", "datacv2"


def _answer(benchmark: str, form: str, value, where: str) -> str | None:
    if value in (None, ""):
        return None
    try:
        return normalise(form, str(value))
    except ValueError:
        raise DatasetError(f"{where}: answer {value!r} is not a valid {benchmark} answer") from None


def _image(root: Path, name: str, where: str, missing: list[str]) -> tuple[Path, str | None]:
    """The image's path, and an error for the sample alone when the file is not there."""
    path = (root / name).resolve()
    if path.is_file():
        return path, None
    missing.append(name)
    return path, f"{where}: image file not found: {path} (is --images-root the folder holding the images?)"


def _counts(missing: list[str]) -> dict[str, int]:
    return {"missing_image": len(missing)} if missing else {}


def load_datacv1(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    """Task I: `index,image_path,prompt` (+ optional `answer`); answers 1/0 become yes/no."""
    root = (images_root or path.parent).resolve()
    samples, missing = [], []
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        require_columns(reader.fieldnames or [], ["index", "image_path", "prompt"], str(path))
        for line_no, row in enumerate(reader, 2):
            where = f"{path}: line {line_no} (index {row['index']!r})"
            image, error = _image(root, row["image_path"], f"{where}, image_path", missing)
            samples.append(Sample(id=str(row["index"]), images=[image], question=row["prompt"],
                                  answer=_answer(TASK_I_NAME, "binary", row.get("answer") or row.get("label"), where),
                                  metadata={"image_path": row["image_path"], "index": str(row["index"])},
                                  error=error, answer_type="yesno"))
    return ListDataset(TASK_I_NAME, samples, _counts(missing))


def item_id(item: dict, where: str) -> str:
    """The number in the image name, as the organisers' code reads it; else the item's own id or index."""
    name = Path(str(item.get("image_name", ""))).name
    if m := re.match(r"(\d+)(?:\.|$)", name):
        return str(int(m.group(1)))
    for key in ("id", "index"):
        if key in item:
            return str(item[key])
    raise DatasetError(f"{where}: image_name {item.get('image_name')!r} does not start with a number, and the "
                       "item has no 'id' or 'index' to use as its submission id")


def load_datacv2(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    """Task II: a JSON list of `image_name, Question, option` (+ optional `answer`); answers A-D."""
    root = (images_root or path.parent).resolve()
    items = read_json_list(path, "items")
    samples, missing = [], []
    for i, item in enumerate(items):
        where = f"{path}: item {i}"
        require_columns(item if isinstance(item, dict) else [], ["image_name", "Question", "option"], where)
        sample_id = item_id(item, where)
        where = f"{where} (id {sample_id!r})"
        image, error = _image(root, item["image_name"], f"{where}, image_name", missing)
        samples.append(Sample(id=sample_id, images=[image], question=item["Question"],
                              answer=_answer(TASK_II_NAME, "choice", item.get("answer"), where),
                              choices=dot_options(item["option"], where),
                              metadata={"image_name": item["image_name"], "index": sample_id}, error=error))
    return ListDataset(TASK_II_NAME, samples, _counts(missing))


TASK_I = Benchmark(
    TASK_I_NAME, load_datacv1,
    "DataCV 2026 Task I: yes/no about a classic illusion (test.csv; image paths relative to it)",
    detect=lambda path, columns: path.suffix == ".csv" and {"index", "image_path", "prompt"} <= columns.names,
    answer_form="binary", agent_task=1, inspect_task="datacv_task1")
TASK_II = Benchmark(
    TASK_II_NAME, load_datacv2, "DataCV 2026 Task II: 4-way multiple choice (test.json; images under images_root)",
    detect=lambda path, columns: path.suffix == ".json" and {"image_name", "Question", "option"} <= columns.names,
    answer_form="choice", agent_task=2, inspect_task="datacv_task2")
