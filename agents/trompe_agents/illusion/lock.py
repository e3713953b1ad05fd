"""One writer per run folder: an OS lock held for the run's lifetime, released by the kernel when its holder dies.

`fcntl.flock` on `<run>/run.lock`: a second run into the folder fails at once naming the holder's pid; a run that
was killed leaves the file but no lock, so the next run takes the folder over without any staleness guess.

The lock writes only into a lock file: one it creates (O_EXCL), or one a run left, a plain file of its own with
one name that holds nothing but a pid. A link there is refused (runfolder.py), and so is any other file, so a
`run.lock` made to name another file never has that file truncated to a pid.
"""

from __future__ import annotations

import fcntl
import os
import re
from pathlib import Path
from types import TracebackType

from ..runfolder import RunFolder

LOCK = "run.lock"
PID = re.compile(rb"(\d{1,20}\n)?")  # what a lock file holds: its last holder's pid, or nothing yet


class RunBusy(ValueError):
    """Another live process is writing this run folder."""


class RunLock:
    """`with RunLock(folder):` holds the folder's lock; the lock file keeps the holder's pid for the message."""

    def __init__(self, folder: Path):
        self.folder = RunFolder(folder)
        self.path = self.folder.path / LOCK
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise RunBusy(f"{self.path.parent} is being written by another run (pid {holder}); wait for it to "
                          "finish, stop it, or choose another --out") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd
        return self

    def _open(self) -> int:
        """The lock file: created here, or one a run left (a plain file of ours, one link, holding only a pid)."""
        try:
            return self.folder.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            pass
        fd = self.folder.open(LOCK, os.O_RDWR)
        info = os.fstat(fd)
        if info.st_nlink != 1 or info.st_uid != os.geteuid() or info.st_size > 32 or \
                not PID.fullmatch(os.pread(fd, 32, 0)):
            os.close(fd)
            raise ValueError(f"{self.path}: not a run's lock file (a plain file of yours, with one name, holding "
                             "only a pid); it is left as it is: remove it, or choose another --out")
        return fd

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the lock; the file stays (removing it would race a new holder)
            self._fd = None
