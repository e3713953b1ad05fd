"""A run's folder and everything in it, opened beneath the folder and never through a link.

A run folder may sit where others can write (a shared disk, a folder unpacked from elsewhere): a link planted as
`run.lock`, `results.jsonl` or `report` once made a run write its pid, its results or its report wherever the
link led. The folder the user names is opened as named (links in that path are followed, as for any path given
on a command line); below it every folder and file is opened relative to its parent's descriptor with
O_NOFOLLOW, so a link, or anything not a plain file or folder, is refused with one line naming it (LinkRefused)
and nothing is read or written through it. Files are replaced by a rename within the folder's descriptor, which
replaces a link in place rather than writing through it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

STALE_TEMP_S = 60.0  # a temp file this old belongs to a writer that was killed (a live one renames in ms)
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class LinkRefused(ValueError):
    """A link, or another entry that is not a plain file or folder, where a run keeps one of its own."""

    def __init__(self, path: Path, kind: str):
        super().__init__(f"{path}: a symbolic link or not a {kind}; a run never reads or writes its files through "
                         "one: remove it, or choose another folder")


@dataclass(frozen=True)
class RunFolder:
    """`root` (as the user named it) and a folder `inner` below it, each part of which is opened without links."""

    root: Path
    inner: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    @property
    def path(self) -> Path:
        return self.root.joinpath(*self.inner)

    def __truediv__(self, name: str) -> RunFolder:
        return RunFolder(self.root, self.inner + _parts(name))

    @property
    def parent(self) -> RunFolder:
        """The folder holding this one (above the root: the root's own parent, as the user's path names it)."""
        return RunFolder(self.root, self.inner[:-1]) if self.inner else RunFolder(self.root.parent)

    @classmethod
    def of(cls, folder: RunFolder | Path | str) -> RunFolder:
        """`folder` itself, or a path taken as a root."""
        return folder if isinstance(folder, RunFolder) else cls(Path(folder))

    def descriptor(self, create: bool = True) -> int:
        """A descriptor of this folder (the caller closes it); with `create`, missing folders are made."""
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        folder = os.open(self.root, DIRECTORY)
        walked = self.root
        try:
            for part in self.inner:
                walked = walked / part
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=folder)
                try:
                    inner = os.open(part, DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise LinkRefused(walked, "folder") from None
                    raise
                os.close(folder)
                folder = inner
        except BaseException:
            os.close(folder)
            raise
        return folder

    def open(self, name: str, flags: int, mode: int = 0o644) -> int:
        """A descriptor of the plain file `name` (may hold folders: 'traces/s1/trace.jsonl'), never through a link;
        O_CREAT makes the folders on the way."""
        where, leaf = self._split(name)
        folder = where.descriptor(create=bool(flags & os.O_CREAT))
        try:
            fd = os.open(leaf, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LinkRefused(where.path / leaf, "file") from None
            raise
        finally:
            os.close(folder)
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device opened (O_NONBLOCK: without waiting)
            os.close(fd)
            raise LinkRefused(where.path / leaf, "file")
        return fd

    def exists(self, name: str) -> bool:
        """Whether `name` is there (a link counts: reading or writing it is refused, not skipped)."""
        where, leaf = self._split(name)
        try:
            folder = where.descriptor(create=False)
        except FileNotFoundError:
            return False
        try:
            os.stat(leaf, dir_fd=folder, follow_symlinks=False)
            return True
        except FileNotFoundError:
            return False
        finally:
            os.close(folder)

    def names(self) -> list[str]:
        """The names in this folder (none when it is not there yet)."""
        try:
            folder = self.descriptor(create=False)
        except FileNotFoundError:
            return []
        try:
            return os.listdir(folder)
        finally:
            os.close(folder)

    def size(self, name: str) -> int | None:
        """The size of the plain file `name`, or None when there is none."""
        try:
            fd = self.open(name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def read_bytes(self, name: str) -> bytes:
        with os.fdopen(self.open(name, os.O_RDONLY), "rb") as file:
            return file.read()

    def read_json(self, name: str) -> Any:
        """Parse a JSON state file; a broken one is a ValueError naming the file and what to do."""
        raw = self.read_bytes(name)
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError as exc:
            raise ValueError(f"{self.path / name}: not valid JSON ({exc}); restore it from a backup or start a new "
                             "run folder") from None

    def log(self, name: str) -> AppendLog:
        """`name` opened as an append-only log of whole lines (`AppendLog`), created if missing."""
        return AppendLog(self.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT), self.path / name)

    def write_bytes(self, name: str, data: bytes) -> None:
        """Write `name` whole in place (no rename, no fsync: for files a rerun rewrites, such as images)."""
        with os.fdopen(self.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as file:
            file.write(data)

    def write_atomic(self, name: str, data: str | bytes, sync: bool = True) -> None:
        """Replace `name` whole: a temp file beside it, fsync, rename; a kill leaves the old or the new file."""
        where, leaf = self._split(name)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        folder = where.descriptor()
        try:
            with contextlib.suppress(FileNotFoundError):  # refused as any other way in (a rename would replace it)
                if not stat.S_ISREG(os.stat(leaf, dir_fd=folder, follow_symlinks=False).st_mode):
                    raise LinkRefused(where.path / leaf, "file")
            temp = f".{leaf}.{secrets.token_hex(4)}.tmp"
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                         dir_fd=folder)
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(raw)
                    if sync:
                        file.flush()
                        os.fsync(file.fileno())
                os.replace(temp, leaf, src_dir_fd=folder, dst_dir_fd=folder)  # a link at `leaf` is replaced
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp, dir_fd=folder)
                raise
            if sync:
                os.fsync(folder)  # the rename itself survives a power cut
            _remove_stale_temps(folder, leaf)
        finally:
            os.close(folder)

    def write_json(self, name: str, data: Any, indent: int = 2) -> None:
        self.write_atomic(name, json.dumps(data, indent=indent, default=str, ensure_ascii=False))

    def remove_tree(self, name: str) -> None:
        """Delete the folder (or link, or file) `name` and all in it, following no link; gone already is fine."""
        where, leaf = self._split(name)
        try:
            folder = where.descriptor(create=False)
        except FileNotFoundError:
            return
        try:
            info = os.stat(leaf, dir_fd=folder, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(leaf, dir_fd=folder)
            else:
                os.unlink(leaf, dir_fd=folder)
        except FileNotFoundError:
            pass
        finally:
            os.close(folder)

    def cut_torn_tail(self, name: str) -> int:
        """Truncate a partial last line of an append-only log in place (never rewrite it); returns bytes cut."""
        if not self.exists(name):
            return 0
        with os.fdopen(self.open(name, os.O_RDWR), "rb+") as file:
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

    def _split(self, name: str) -> tuple[RunFolder, str]:
        parts = _parts(name)
        if not parts:
            raise ValueError(f"{self.path}: a file name is needed, got {name!r}")
        return RunFolder(self.root, self.inner + parts[:-1]), parts[-1]


def _parts(name: str) -> tuple[str, ...]:
    """The parts of a relative name; one that climbs out ('..') or starts at '/' is refused."""
    parts = PurePosixPath(name).parts
    if PurePosixPath(name).is_absolute() or ".." in parts:
        raise ValueError(f"{name!r}: not a name inside the run folder")
    return tuple(p for p in parts if p != ".")


def _remove_stale_temps(folder: int, leaf: str) -> None:
    """Delete the temp files of writers of `leaf` killed between writing and renaming."""
    now = time.time()
    prefix = f".{leaf}."
    for entry in os.listdir(folder):
        if entry.startswith(prefix) and entry.endswith(".tmp"):
            with contextlib.suppress(FileNotFoundError):
                if now - os.stat(entry, dir_fd=folder, follow_symlinks=False).st_mtime > STALE_TEMP_S:
                    os.unlink(entry, dir_fd=folder)


class AppendLog:
    """An append-only log written one whole line per write(2): a line is in the file whole or not at all.

    A write the disk refuses part-way (a full disk, a quota, an I/O error) is cut back to where the line began,
    so no torn line is left for a later reader, even one that never repairs the tail; only this process appends
    (the run folder's lock says so), so the size before the write is where the line began."""

    def __init__(self, fd: int, path: Path):
        self.fd, self.path = fd, path

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
