"""State files that survive a kill at any moment: whole-file replacement and append-only logs."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` whole: temp file in the same folder, fsync, rename; a kill leaves the old or the new file."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(raw)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)  # the rename itself survives a power cut
    finally:
        os.close(folder)
    remove_stale_temps(path)


STALE_TEMP_S = 60.0  # a temp file this old belongs to a writer that was killed (a live one renames in ms)


def remove_stale_temps(path: Path) -> None:
    """Delete the temp files of writers of `path` killed between writing and renaming."""
    now = time.time()
    for stale in Path(path).parent.glob(f".{Path(path).name}.*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            if now - stale.stat().st_mtime > STALE_TEMP_S:
                stale.unlink()


def write_json_atomic(path: Path, data: Any, indent: int = 2) -> None:
    write_atomic(path, json.dumps(data, indent=indent, default=str, ensure_ascii=False))


def read_json(path: Path) -> Any:
    """Parse a JSON state file; a broken one is a ValueError naming the file and what to do."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); restore it from a backup or start a new run "
                         "folder") from None


def cut_torn_tail(path: Path) -> int:
    """Truncate a partial last line of an append-only log in place (never rewrite it); returns bytes cut."""
    path = Path(path)
    if not path.exists():
        return 0
    with path.open("rb+") as file:
        size = file.seek(0, os.SEEK_END)
        end = size
        while end > 0:  # find the last newline, reading backwards in blocks
            start = max(0, end - 65536)
            file.seek(start)
            block = file.read(end - start)
            newline = block.rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        if end < size:
            file.truncate(end)
            file.flush()
            os.fsync(file.fileno())
        return size - end



class AppendLog:
    """An append-only log written one whole line per write(2): a line is in the file whole or not at all.

    A write the disk refuses part-way (a full disk, a quota, an I/O error) is cut back to where the line began,
    so no torn line is left for a later reader, even one that never repairs the tail; only this process appends
    (the run folder's lock says so), so the size before the write is where the line began."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)

    def append(self, line: str) -> None:
        data = line.encode("utf-8")
        start = os.fstat(self.fd).st_size
        try:
            written = os.write(self.fd, data)
            if written != len(data):  # the disk took part of it: as full as a refused write
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, start)
            if exc.filename is None:
                exc.filename = str(self.path)
            raise

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> AppendLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
