"""Hugging Face splits of a parquet snapshot: which files hold which split, and which one to evaluate."""

from __future__ import annotations

import re
from pathlib import Path

from .base import DatasetError

SHARD = re.compile(r"^(?P<split>.+?)-\d{5}-of-\d{5}$")  # data/test-00000-of-00001.parquet
ALL = "all"


def split_of(file: Path) -> str | None:
    """'test-00000-of-00001.parquet' -> 'test'; 'default/test/0000.parquet' (refs/convert/parquet) -> 'test'."""
    if m := SHARD.match(file.stem):
        return m["split"]
    if re.fullmatch(r"\d+", file.stem):
        return file.parent.name
    return None


def pick_split(files: list[Path], split: str | None, evaluation: str | None, source: Path
               ) -> tuple[list[Path], str | None]:
    """The files of the requested split (default: `evaluation`, the benchmark's labelled evaluation split, where
    the snapshot holds several) and that split's name."""
    found = sorted({s for f in files if (s := split_of(f)) is not None})
    wanted = split or (evaluation if len(found) > 1 else None)
    if wanted in (None, ALL):
        return files, wanted if wanted else (found[0] if len(found) == 1 else None)
    chosen = [f for f in files if split_of(f) == wanted]
    if not chosen:
        listed = ", ".join(found) or "none (files are not named <split>-NNNNN-of-NNNNN.parquet)"
        raise DatasetError(f"--split: {source} has no split {wanted!r}; its splits: {listed} (or 'all')")
    return chosen, wanted


def check_no_split(split: str | None, fmt: str, path: Path) -> None:
    """Formats without splits accept no --split other than 'all'."""
    if split not in (None, ALL):
        raise DatasetError(f"--split: {path} is a {fmt} file, which has no splits; leave --split out")
