"""HallusionBench (HF rayguan/HallusionBench): a JSON list of questions; answers "1"/"0" become yes/no."""

from __future__ import annotations

from pathlib import Path

from .answers import normalise
from .base import DatasetError, ListDataset, Sample
from .files import read_json_list, require_columns, require_file

COLUMNS = ["category", "subcategory", "visual_input", "set_id", "figure_id", "question_id", "question",
           "gt_answer", "filename"]

METADATA = ("category", "visual_input", "set_id", "figure_id", "question_id", "gt_answer_details",
            "filename")


def load_hallusionbench(path: Path, images_root: Path | None = None) -> ListDataset:
    """Questions with an image (visual_input != 0); text-only questions are skipped and counted."""
    root = (images_root or path.parent).resolve()
    items = read_json_list(path, "questions")
    samples = []
    for i, item in enumerate(items):
        where = f"{path}: item {i}"
        require_columns(item if isinstance(item, dict) else [], COLUMNS, where)
        sample_id = "_".join(str(item[k]) for k in ("category", "subcategory", "set_id", "figure_id",
                                                        "question_id"))
        where = f"{where} (id {sample_id!r})"
        if str(item["visual_input"]) == "0" or not item["filename"]:
            continue
        image = require_file(root / item["filename"], f"{where}, filename")
        gt = item["gt_answer"]
        if str(gt) not in ("0", "1"):
            raise DatasetError(f"{where}: gt_answer must be '0' or '1', got {gt!r}")
        samples.append(Sample(id=sample_id, images=[image], question=item["question"],
                              answer=normalise("datacv1", str(gt)), category=item["subcategory"],
                              metadata={k: item.get(k) for k in METADATA}))
    return ListDataset("hallusionbench", samples)
