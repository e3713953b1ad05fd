"""BlindTest (HF XAI/vlmsareblind): parquet rows `task, image, prompt, groundtruth, metadata`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .answers import normalise
from .base import DatasetError, ListDataset, Sample
from .parquet import images_folder, read_rows, write_image

COLUMNS = ["task", "image", "prompt", "groundtruth"]
# HF `task` values and the BlindTest repo's generator names, keyed without case or punctuation, mapped to the
# task names SEVEX reports (and the probe families use). SEVEX's "OverlappingShapes" is the two-circle task.
TASK_NAMES = {
    "lineplotintersections": "LineIntersections", "lineintersection": "LineIntersections",
    "lineintersections": "LineIntersections",
    "circledletter": "CircledLetter", "circledword": "CircledLetter",
    "subwayconnections": "SubwayMap", "subwaymap": "SubwayMap",
    "touchingcircles": "OverlappingShapes", "touchingcircle": "OverlappingShapes",
    "overlappingshapes": "OverlappingShapes",
    "nestedsquares": "NestedSquares",
    "countinggridblankgrids": "CountingRowsAndColumns", "countinggridwordgrids": "CountingRowsAndColumns",
    "countingrowsandcolumns": "CountingRowsAndColumns", "countinggrid": "CountingRowsAndColumns",
    "olympiccountingcircles": "CountingCircles", "olympiccountingpentagons": "CountingCircles",
    "countingcircles": "CountingCircles",
}


# The answer each task's prompt asks for (HF XAI/vlmsareblind `prompt`: "{3}", "Yes/No", "{a}", rows={5} columns={6}).
ANSWER_TYPES = {"LineIntersections": "integer", "CircledLetter": "letter", "SubwayMap": "integer",
                "OverlappingShapes": "yesno", "NestedSquares": "integer", "CountingRowsAndColumns": "pair",
                "CountingCircles": "integer"}


def task_name(task: str) -> str:
    """SEVEX's name for a BlindTest task; unknown tasks keep their own name."""
    return TASK_NAMES.get(re.sub(r"[^a-z]", "", task.lower()), task)


def load_blindtest(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    folder = images_folder(images_root, "blindtest", path)
    samples = []
    rows, _ = read_rows(path, COLUMNS, split, "blindtest")
    for i, (where, row) in enumerate(rows):
        sample_id = f"{task_name(str(row['task']))}-{i:05d}"
        image = write_image(row["image"], folder, f"{where} (task {row['task']!r}), image")
        try:
            gt = row["groundtruth"]
            answer = normalise("blindtest", gt) if gt not in (None, "") else None
        except ValueError:
            raise DatasetError(f"{where}: groundtruth {row['groundtruth']!r} cannot be read") from None
        meta = row.get("metadata")
        try:
            meta = json.loads(meta) if isinstance(meta, str) else meta
        except ValueError:
            pass  # free text metadata is kept as it is
        samples.append(Sample(id=sample_id, images=[image], question=row["prompt"], answer=answer,
                              category=task_name(str(row["task"])),
                              answer_type=ANSWER_TYPES.get(task_name(str(row["task"]))),
                              metadata={"task": row["task"], "groundtruth": row["groundtruth"],
                                        "metadata": meta}))
    return ListDataset("blindtest", samples)
