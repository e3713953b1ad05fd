"""V* bench questions (penghao-wu/vstar; shipped again in ziplab/DDP asset/): JSONL lines
`image, text, category, question_id, label`, the options written in `text` as "(A) ..." lines.

`image` ("direct_attributes/sa_4690.jpg") is relative to the benchmark folder, which need not hold the JSONL:
pass --images-root.
"""

from __future__ import annotations

from pathlib import Path

from .base import DatasetError, ListDataset, Sample
from .files import read_json_lines, require_columns
from .options import inline_options
from .splits import check_no_split

COLUMNS = ["image", "text", "category", "question_id", "label"]


def load_vstar(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    check_no_split(split, "V* bench", path)
    root = (images_root or path.parent).resolve()
    samples = []
    for where, row in read_json_lines(path):
        require_columns(row if isinstance(row, dict) else [], COLUMNS, where)
        where = f"{where} (question_id {row['question_id']!r})"
        image = root / row["image"]
        if not image.is_file():
            raise DatasetError(f"{where}, image: file not found: {image}; pass --images-root (the V* bench folder "
                               "holding direct_attributes/ and relative_position/)")
        stem, choices = inline_options(row["text"], where)
        if not choices:
            raise DatasetError(f"{where}: 'text' holds no '(A) ...' option lines")
        label = str(row["label"]).strip().strip("()").upper()
        if label not in "ABCDEFGH"[:len(choices)] or not label:
            raise DatasetError(f"{where}: label {row['label']!r} is not one of the {len(choices)} option letters")
        samples.append(Sample(id=str(row["question_id"]), images=[image.resolve()], question=stem, answer=label,
                              choices=choices, category=row["category"],
                              metadata={"prompt": row["text"], "image": row["image"]}))
    return ListDataset("vstar", samples)
