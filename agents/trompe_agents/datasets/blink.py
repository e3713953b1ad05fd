"""BLINK (HF BLINK-Benchmark/BLINK): parquet rows with up to four images and an "(A)"-style answer.

A snapshot holds 14 subtask configs, each with `val` and `test` files; test answers are hidden, so the
`val` split is read unless --split says otherwise (zeyofu/BLINK_Benchmark eval/evaluate.py scores val).
"""

from __future__ import annotations

import re
from pathlib import Path

from .answers import normalise
from .base import DatasetError, ListDataset, Sample
from .parquet import images_folder, read_rows, write_image

COLUMNS = ["idx", "question", "choices", "answer", "image_1"]


def subtask(idx: str) -> str:
    """'val_Relative_Depth_12' -> 'Relative_Depth'."""
    return re.sub(r"^(val|test)_|_\d+$", "", idx)


def subtask_key(name: str) -> str:
    """'Relative Depth', 'relative_depth' and 'Relative_Depth' name the same subtask."""
    return re.sub(r"[\s_\-]+", "_", name.strip()).lower()


def load_blink(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    folder = images_folder(images_root, "blink", path)
    samples = []
    rows, chosen = read_rows(path, COLUMNS, split, "blink")
    for where, row in rows:
        idx = str(row["idx"])
        where = f"{where} (idx {idx!r})"
        images = [write_image(row[f"image_{k}"], folder, f"{where}, image_{k}")
                  for k in range(1, 5) if k == 1 or row.get(f"image_{k}") is not None]
        answer = row["answer"]
        if answer in (None, "", "?", "hidden"):
            answer = None  # the test split hides its answers
        else:
            try:
                answer = normalise("blink", answer)
            except ValueError:
                raise DatasetError(f"{where}: answer {row['answer']!r} is not a letter like (A)") from None
        samples.append(Sample(id=idx, images=images, question=row["question"], answer=answer,
                              choices=list(row["choices"] or []),
                              category=row.get("sub_task") or subtask(idx),
                              metadata={"prompt": row.get("prompt"), "raw_answer": row["answer"], "split": chosen}))
    return ListDataset("blink", samples)
