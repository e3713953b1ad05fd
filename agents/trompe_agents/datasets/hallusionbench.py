"""HallusionBench: the official JSON (tianyi-lab/HallusionBench) or lmms-lab's parquet; answers "1"/"0" -> yes/no.

Every question is kept, text-only ones (visual_input 0, no image) included, because the official scoring
(utils.py: get_eval_all, get_eval_pair_all, get_eval_fig) counts them. The JSON's `filename` ("./VD/illusion/
0_0.png") is relative to the image folder, not the JSON; the official code builds the same path as
root/category/subcategory/<set_id>_<figure_id>.png. --split image|non_image (lmms-lab's split names) keeps
only the questions with or without a figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import DatasetError, ListDataset, Sample
from .files import read_json_list, require_columns
from .parquet import images_folder, read_rows, write_image
from .splits import ALL

COLUMNS = ["category", "subcategory", "visual_input", "set_id", "figure_id", "question_id", "question",
           "gt_answer", "filename"]
KEYS = ("category", "subcategory", "visual_input", "set_id", "figure_id", "question_id")
METADATA = (*KEYS, "gt_answer_details", "filename", "sample_note")
SPLITS = ("image", "non_image", ALL)
IMAGE_FOLDER = "hallusion_bench"  # what the repository's hallusion_bench.zip unpacks to


def sample_id(item: dict[str, Any]) -> str:
    return "_".join(str(item[k]) for k in ("category", "subcategory", "set_id", "figure_id", "question_id"))


def has_figure(item: dict[str, Any]) -> bool:
    return str(item["visual_input"]) != "0"


def _answer(item: dict[str, Any], where: str) -> str:
    gt = str(item["gt_answer"]).strip()
    if gt not in ("0", "1"):
        raise DatasetError(f"{where}: gt_answer must be '0' or '1', got {item['gt_answer']!r}")
    return "yes" if gt == "1" else "no"


def _sample(item: dict[str, Any], images: list[Path], where: str) -> Sample:
    return Sample(id=sample_id(item), images=images, question=item["question"], answer=_answer(item, where),
                  category=item["subcategory"], metadata={k: item.get(k) for k in METADATA}, answer_type="yesno")


def image_roots(path: Path, images_root: Path | None) -> list[Path]:
    """Where figures may live: the given folder, else hallusion_bench/ beside the JSON, else the JSON's folder."""
    if images_root is not None:
        return [images_root.resolve()]
    return [(path.parent / IMAGE_FOLDER).resolve(), path.parent.resolve()]


def figure_path(item: dict[str, Any], roots: list[Path], where: str) -> Path:
    """root/filename, or root/category/subcategory/<set_id>_<figure_id>.png as the official utils.py builds it."""
    official = f"{item['category']}/{item['subcategory']}/{item['set_id']}_{item['figure_id']}.png"
    names = [n for n in (item.get("filename"), official) if n]
    for root in roots:
        for name in names:
            if (root / name).is_file():
                return (root / name).resolve()
    raise DatasetError(f"{where}: figure not found: {names[0]} under {', '.join(map(str, roots))}; pass "
                       "--images-root FOLDER (the folder holding VD/ and VS/)")


def _keep(item: dict[str, Any], split: str | None) -> bool:
    return split in (None, ALL) or (split == "image") == has_figure(item)


def _check_split(split: str | None, path: Path) -> None:
    if split not in (None, *SPLITS):
        raise DatasetError(f"--split: {path}: HallusionBench splits are {', '.join(SPLITS)}, got {split!r}")


def load_hallusionbench(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    _check_split(split, path)
    if path.suffix == ".json":
        return _load_json(path, images_root, split)
    return _load_parquet(path, images_root, split)


def _load_json(path: Path, images_root: Path | None, split: str | None) -> ListDataset:
    roots = image_roots(path, images_root)
    samples = []
    for i, item in enumerate(read_json_list(path, "questions")):
        where = f"{path}: item {i}"
        require_columns(item if isinstance(item, dict) else [], COLUMNS, where)
        where = f"{where} (id {sample_id(item)!r})"
        if _keep(item, split):
            images = [figure_path(item, roots, f"{where}, filename")] if has_figure(item) else []
            samples.append(_sample(item, images, where))
    return ListDataset("hallusionbench", samples)


def _load_parquet(path: Path, images_root: Path | None, split: str | None) -> ListDataset:
    """lmms-lab/HallusionBench: the same columns plus an `image` struct, in splits image and non_image."""
    folder = images_folder(images_root, "hallusionbench", path)
    rows, _ = read_rows(path, [*COLUMNS, "image"], ALL, "hallusionbench")  # rows are kept by visual_input
    samples = []
    for where, item in rows:
        where = f"{where} (id {sample_id(item)!r})"
        if not _keep(item, split):
            continue
        images = [write_image(item["image"], folder, f"{where}, image")] if has_figure(item) else []
        samples.append(_sample(item, images, where))
    return ListDataset("hallusionbench", samples)
