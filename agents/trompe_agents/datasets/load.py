"""`load_dataset`: one entry point for every supported format, with format detection from the files."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

from .base import DatasetError, ListDataset
from .blindtest import load_blindtest
from .blink import load_blink
from .datacv import load_datacv1, load_datacv2
from .hallusionbench import load_hallusionbench
from .illusionvqa import load_illusionvqa
from .jsonl import PROBES_FILE, load_jsonl
from .labels import join_labels
from .parquet import parquet_columns

LOADERS: dict[str, Callable[[Path, Path | None], ListDataset]] = {
    "jsonl": load_jsonl, "datacv1": load_datacv1, "datacv2": load_datacv2, "blink": load_blink,
    "blindtest": load_blindtest, "hallusionbench": load_hallusionbench, "illusionvqa": load_illusionvqa,
}


def _json_keys(path: Path) -> set[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return set(data[0]) if isinstance(data, list) and data and isinstance(data[0], dict) else set()


def detect_format(path: Path) -> str:
    """Tell the format from the file name, CSV header, JSON keys or parquet columns."""
    if path.is_dir() and (path / PROBES_FILE).is_file():
        return "jsonl"
    if path.suffix == ".jsonl":
        first = next((line for line in path.open(encoding="utf-8") if line.strip()), "{}")
        keys = set(json.loads(first))
        return "illusionvqa" if "images" not in keys and "image" in keys else "jsonl"
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as f:
            header = set(next(csv.reader(f), []))
        if {"index", "image_path", "prompt"} <= header:
            return "datacv1"
    elif path.suffix == ".json":
        keys = _json_keys(path)
        if {"image_name", "Question", "option"} <= keys:
            return "datacv2"
        if {"gt_answer", "visual_input"} <= keys:
            return "hallusionbench"
        if "question" in keys and ("options" in keys or "choices" in keys):
            return "illusionvqa"
    elif path.suffix == ".parquet" or path.is_dir():
        columns = set(parquet_columns(path))
        if {"task", "groundtruth"} <= columns:
            return "blindtest"
        if {"idx", "choices", "image_1"} <= columns:
            return "blink"
        if {"image", "question"} <= columns and ({"options", "choices"} & columns):
            return "illusionvqa"
    raise DatasetError(f"dataset: cannot tell the format of {path}; pass format= one of {', '.join(LOADERS)}")


def load_dataset(path: Path | str, format: str | None = None, labels: Path | str | None = None,
                 images_root: Path | str | None = None) -> ListDataset:
    """Read a local dataset file or folder into samples.

    images_root: the folder image paths are relative to (default: the dataset file's folder); for parquet
    formats, the folder embedded images are written to (default: a cache folder for that exact file,
        reused by later loads; see `parquet.images_folder`).
    labels: an optional id -> answer file joined onto the samples (see `labels.read_labels`).
    """
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"dataset: file not found: {path}")
    kind = format or detect_format(path)
    if kind not in LOADERS:
        raise DatasetError(f"format: unknown format {kind!r}; choose one of {', '.join(LOADERS)}")
    if kind == "jsonl" and path.is_dir():
        path = path / PROBES_FILE
    dataset = LOADERS[kind](path, Path(images_root) if images_root is not None else None)
    return join_labels(dataset, Path(labels), kind) if labels is not None else dataset
