"""State files that survive a kill at any moment: whole-file replacement and append-only logs.

Each is opened beneath its folder without following a link at its own name (runfolder.py); a file deeper in a
run folder is reached through a `RunFolder`, which refuses links in the folders on the way too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .runfolder import STALE_TEMP_S, RunFolder

__all__ = ["STALE_TEMP_S", "cut_torn_tail", "read_json", "write_atomic", "write_json_atomic"]


def _entry(path: Path) -> tuple[RunFolder, str]:
    path = Path(path)
    return RunFolder(path.parent), path.name


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` whole: temp file in the same folder, fsync, rename; a kill leaves the old or the new file."""
    folder, name = _entry(path)
    folder.write_atomic(name, data)


def write_json_atomic(path: Path, data: Any, indent: int = 2) -> None:
    folder, name = _entry(path)
    folder.write_json(name, data, indent)


def read_json(path: Path) -> Any:
    """Parse a JSON state file; a broken one is a ValueError naming the file and what to do."""
    folder, name = _entry(path)
    return folder.read_json(name)


def cut_torn_tail(path: Path) -> int:
    """Truncate a partial last line of an append-only log in place (never rewrite it); returns bytes cut."""
    folder, name = _entry(path)
    return folder.cut_torn_tail(name)
