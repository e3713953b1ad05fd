"""TeT-style parquet (ziplab/DDP "asset/TeT benchmark/*.parquet"): `idx, question, image{bytes,path},
groundtruth, task`. A row whose image has no bytes fails alone at run time; the load counts it.

colorblindhard asks for the characters on a colour-dot plate ("EJ", answered as \\box{EJ}): a short-string
answer; a question with "(A) ..." option lines is multiple choice.
"""

from __future__ import annotations

from pathlib import Path

from .base import DatasetError, ListDataset, Sample
from .benchmark import Benchmark, Columns
from .forms import normalise
from .options import inline_options
from .parquet import images_folder, read_rows, safe_name, write_image

COLUMNS = ["idx", "question", "image", "groundtruth", "task"]
NAME = "tet"


def load_tet(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    folder = images_folder(images_root, NAME, path)
    rows, chosen = read_rows(path, COLUMNS, split)
    samples, missing = [], 0
    for where, row in rows:
        idx = str(row["idx"])
        where = f"{where} (idx {idx!r})"
        _, choices = inline_options(str(row["question"]), where)
        value = row["image"]
        error = None
        if isinstance(value, dict) and not value.get("bytes") or value is None:
            missing += 1
            image = folder / f"{safe_name(idx)}.missing"
            error = f"{where}, image: no image bytes in the row (path {value.get('path') if value else None!r})"
        else:
            image = write_image(value, folder, f"{where}, image")
        gt = row["groundtruth"]
        try:
            answer = normalise("auto", str(gt), choices, NAME) if gt not in (None, "") else None
        except ValueError:
            raise DatasetError(f"{where}: groundtruth {gt!r} cannot be read") from None
        samples.append(Sample(id=idx, images=[image], question=row["question"], answer=answer, choices=choices,
                              answer_type=None if choices else "string",  # colorblindhard: the characters read
                              category=row["task"], metadata={"groundtruth": gt, "split": chosen}, error=error))
    return ListDataset(NAME, samples, {"missing_image": missing} if missing else {})


def detect(path: Path, columns: Columns) -> bool:
    return (path.suffix == ".parquet" or path.is_dir()) and {"idx", "question", "groundtruth", "image"} <= columns.names


BENCHMARK = Benchmark(NAME, load_tet, "TeT: short answers and multiple choice per task (parquet)", detect=detect,
                      answer_form="auto", category_rule="accuracy per task, mean over tasks")
