"""Small checks shared by the loaders: files that must exist, columns that must be present."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .base import DatasetError


def require_file(path: Path, what: str) -> Path:
    """The resolved path, or an error naming what was expected there."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{what}: file not found: {path}")
    return path.resolve()


def require_columns(have: Iterable[str], need: Iterable[str], where: str) -> None:
    """Every needed column or key is present, or an error naming the first missing one."""
    have = list(have)
    for name in need:
        if name not in have:
            found = ", ".join(map(str, have)) or "none"
            raise DatasetError(f"{where}: missing column {name!r} (found: {found})")
