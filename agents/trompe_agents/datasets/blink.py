"""BLINK (HF BLINK-Benchmark/BLINK): parquet rows with up to four images and an "(A)"-style answer."""

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


def load_blink(path: Path, images_root: Path | None = None) -> ListDataset:
    folder = images_folder(images_root, "blink", path)
    samples = []
    for where, row in read_rows(path, COLUMNS):
        idx = str(row["idx"])
        where = f"{where} (idx {idx!r})"
        images = [write_image(row[f"image_{k}"], folder, f"{idx}_image_{k}", f"{where}, image_{k}")
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
                              metadata={"prompt": row.get("prompt"), "raw_answer": row["answer"]}))
    return ListDataset("blink", samples)
