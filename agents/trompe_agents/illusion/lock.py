"""One writer per run folder: an OS lock held for the run's lifetime, released by the kernel when its holder dies.

`fcntl.flock` on `<run>/run.lock`: a second run into the folder fails at once naming the holder's pid; a run that
was killed leaves the file but no lock, so the next run takes the folder over without any staleness guess.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

LOCK = "run.lock"


class RunBusy(ValueError):
    """Another live process is writing this run folder."""


class RunLock:
    """`with RunLock(folder):` holds the folder's lock; the lock file keeps the holder's pid for the message."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / LOCK
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
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

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the lock; the file stays (removing it would race a new holder)
            self._fd = None
