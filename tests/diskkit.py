"""Writes that fail, for tests of state files: the kernel's own EFBIG (as a full disk gives ENOSPC), a real
tiny filesystem that fills up or turns read-only, and a real disk whose writes fail with EIO."""

from __future__ import annotations

import contextlib
import errno
import resource
import shutil
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


class FailingDisk:
    """An ext4 filesystem on a loop device, mounted `sync` on a folder, whose image lies sparse on a tmpfs of its
    own (`store`). Once that tmpfs is filled (`fail`), the loop device can no longer write the image's new blocks:
    the filesystem's next write fails with EIO as on a dying disk, and ext4 then aborts its journal and refuses
    every later write (EROFS). `sync` makes the write itself report the error, not a later writeback."""

    IMAGE = 16 * 1024 * 1024  # bytes of the ext4 image; its tmpfs holds the few hundred KiB mkfs writes, and more

    def __init__(self, where: Path, store: TinyDisk):
        self.where, self.store = where, store
        self.image = store.where / "ext4.img"
        where.mkdir(parents=True, exist_ok=True)
        with self.image.open("wb") as image:
            image.truncate(self.IMAGE)
        subprocess.run(["mkfs.ext4", "-q", "-F", str(self.image)], check=True, capture_output=True)
        self.mounted = False
        self._mount()

    def _mount(self) -> None:
        done = subprocess.run(["mount", "-o", "loop,sync", str(self.image), str(self.where)], capture_output=True,
                              text=True)
        if done.returncode != 0:  # no free loop device, or a container without them
            needs.missing("a loop device", f"run the tests as root on a host with loop devices ({done.stderr.strip()})")
        self.mounted = True

    def fail(self) -> None:
        """Fill the image's tmpfs: from now on the disk fails every write to a block it has not written before."""
        with (self.store.where / "filler").open("wb") as filler:
            try:
                while True:
                    filler.write(bytes(1024 * 1024))
                    filler.flush()
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise

    def repair(self) -> None:
        """Unmount, give the image back its space, let e2fsck recover the journal, and mount it again."""
        self.unmount()
        (self.store.where / "filler").unlink()
        checked = subprocess.run(["e2fsck", "-f", "-y", str(self.image)], capture_output=True, text=True)
        assert checked.returncode in (0, 1), checked.stdout + checked.stderr  # 1: errors corrected
        self._mount()

    def unmount(self) -> None:
        if self.mounted:  # the loop device is detached with it (mount -o loop sets autoclear)
            subprocess.run(["umount", str(self.where)], check=True)
            self.mounted = False


@contextlib.contextmanager
def failing_disk(where: Path, backing: Path) -> Iterator[FailingDisk]:
    """A FailingDisk on `where`, its image's tmpfs on `backing`, for the block (skipped where a tmpfs or a loop
    device cannot be mounted: not root, or a container without loop devices)."""
    for tool in ("mkfs.ext4", "e2fsck"):
        if shutil.which(tool) is None:
            needs.missing(tool, "Debian: apt-get install e2fsprogs")
    with tiny_disk(backing, 2 * FailingDisk.IMAGE) as store:
        disk = FailingDisk(where, store)
        try:
            yield disk
        finally:
            disk.unmount()
