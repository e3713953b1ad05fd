"""Writes that fail, for tests of state files: the kernel's own EFBIG (as a full disk gives ENOSPC), and a real
tiny filesystem that fills up or turns read-only."""

from __future__ import annotations

import contextlib
import resource
import subprocess
from collections.abc import Iterator
from pathlib import Path

import needs


@contextlib.contextmanager
def no_file_may_grow():
    """Every write to a regular file fails with EFBIG until the block ends (Python ignores SIGXFSZ)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


class TinyDisk:
    """A tmpfs of its own mounted on a folder: a real filesystem that fills up, or turns read-only, when told."""

    def __init__(self, where: Path, size: int):
        self.where = where
        where.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if done.returncode != 0:  # not root, or no CAP_SYS_ADMIN in this container
            needs.missing("mounting a tmpfs", f"run the tests as root ({done.stderr.strip()})")

    def remount(self, option: str) -> None:
        """Change the mounted filesystem in place ('size=4m', 'ro', 'rw'): its files stay."""
        subprocess.run(["mount", "-o", f"remount,{option}", str(self.where)], check=True)

    def unmount(self) -> None:
        subprocess.run(["umount", "--lazy", str(self.where)], check=True)


@contextlib.contextmanager
def tiny_disk(where: Path, size: int) -> Iterator[TinyDisk]:
    """A tmpfs of `size` bytes on `where` for the block (skipped where mounting is impossible: not root)."""
    disk = TinyDisk(where, size)
    try:
        yield disk
    finally:
        disk.unmount()
