"""Small checks shared by the loaders: files that must exist, columns that must be present, JSON lists, and images
that stay inside the dataset's folders."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .base import DatasetError, Sample


def require_file(path: Path, what: str) -> Path:
    """The resolved path, or an error naming what was expected there."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{what}: file not found: {path}")
    return path.resolve()


def read_json_list(path: Path, what: str) -> list[Any]:
    """The JSON list in `path`, or an error saying a list of `what` was expected."""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise DatasetError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(items, list):
        raise DatasetError(f"{path}: expected a JSON list of {what}")
    return items


def require_columns(have: Iterable[str], need: Iterable[str], where: str) -> None:
    """Every needed column or key is present, or an error naming the first missing one."""
    have = list(have)
    for name in need:
        if name not in have:
            found = ", ".join(map(str, have)) or "none"
            raise DatasetError(f"{where}: missing column {name!r} (found: {found})")


def read_json_lines(path: Path) -> Iterator[tuple[str, Any]]:
    """('<file>: line N', value) for each non-empty line; a line that is not JSON is an error naming it."""
    with path.open(encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}: line {line_no}"
            try:
                yield where, json.loads(line)
            except ValueError as err:
                raise DatasetError(f"{where}: not valid JSON ({err})") from None


OUTSIDE_FLAG = "--allow-images-outside"


def check_inside(samples: Iterable[Sample], folders: list[Path]) -> Iterator[Sample]:
    """The samples, each refused whose image resolves (links followed, `..` taken) outside every one of `folders`:
    a dataset file names paths, and one written by someone else must not send any file the user can read to a
    vendor."""
    folders = [Path(f).resolve() for f in folders]
    for sample in samples:
        for image in sample.images:
            resolved = Path(image).resolve()
            if not any(resolved.is_relative_to(folder) for folder in folders):
                raise DatasetError(f"dataset: sample {sample.id!r}: image {str(image)!r} resolves to {resolved}, "
                                   f"outside the dataset's folders ({', '.join(map(str, folders))}); move it "
                                   f"there, point --images-root at its folder, or pass {OUTSIDE_FLAG} to read "
                                   "images from anywhere")
        yield sample
