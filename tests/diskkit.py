"""Writes that fail, for tests of state files: the kernel's own EFBIG (as a full disk gives ENOSPC), a real
tiny filesystem that fills up or turns read-only, a real disk whose writes fail with EIO, and a real disk quota
that runs out (EDQUOT). The last two are filesystem images on loop devices, made by the fixture."""

from __future__ import annotations

import contextlib
import errno
import resource
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import needs

T = TypeVar("T")


@contextlib.contextmanager
def no_file_may_grow():
    """Every write to a regular file fails with EFBIG until the block ends (Python ignores SIGXFSZ)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def mount(arguments: list[str], what: str, how: str) -> None:
    """`mount ARGUMENTS`, or the test skipped (a failure in CI) naming `what` is missing and `how` to have it."""
    done = subprocess.run(["mount", *arguments], capture_output=True, text=True)
    if done.returncode != 0:
        needs.missing(what, f"{how} ({done.stderr.strip()})")


class TinyDisk:
    """A tmpfs of its own mounted on a folder: a real filesystem that fills up, or turns read-only, when told."""

    def __init__(self, where: Path, size: int):
        self.where = where
        where.mkdir(parents=True, exist_ok=True)
        # not root, or no CAP_SYS_ADMIN in this container
        mount(["-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)], "mounting a tmpfs",
              "run the tests as root")

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


class LoopMount:
    """A filesystem image mounted on a folder through a loop device, detached with it (mount -o loop sets
    autoclear); skipped where none can be mounted (no free loop device, a container without them)."""

    def __init__(self, image: Path, at: Path, options: str = ""):
        self.image, self.at, self.options = image, at, ",".join(filter(None, ["loop", options]))
        self.mounted = False
        at.mkdir(parents=True, exist_ok=True)
        self.mount()

    def mount(self) -> None:
        mount(["-o", self.options, str(self.image), str(self.at)], "a loop device",
              "run the tests as root on a host with loop devices")
        self.mounted = True

    def unmount(self) -> None:
        """Unmount, and wait until the loop device has let the image go: a mount meanwhile would reuse it, with
        the blocks it cached from before (a repair's changes unseen)."""
        if self.mounted:
            command("umount", self.at)
            self.mounted = False
            deadline = time.monotonic() + 60  # a bound for a device that never lets go, not a timing check
            while subprocess.run(["losetup", "-j", str(self.image)], capture_output=True, text=True).stdout.strip():
                assert time.monotonic() < deadline, f"a loop device still holds {self.image}"
                time.sleep(0.05)


def command(*argv: str | Path) -> None:
    """Run a system command; its failure is an AssertionError that shows what it said."""
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(map(str, argv))}: {done.stdout}{done.stderr}"


def sparse_image(store: TinyDisk, name: str, size: int, *mkfs: str) -> Path:
    """A new filesystem image of `size` bytes on `store`, holes where nothing is written; `mkfs` makes it."""
    image = store.where / name
    with image.open("wb") as file:
        file.truncate(size)
    command(*mkfs, image)
    return image


class FailingDisk:
    """An ext4 filesystem on a loop device, mounted `sync` on `where`, whose image lies sparse on a tmpfs of its
    own (`store`). Once that tmpfs is filled (`fail`), the loop device can no longer write the image's new blocks:
    the filesystem's next write fails with EIO as on a dying disk, and ext4 then aborts its journal and refuses
    every later write (EROFS). `sync` makes the write itself report the error, not a later writeback."""

    IMAGE = 16 * 1024 * 1024  # bytes of the ext4 image; its tmpfs holds the few hundred KiB mkfs writes, and more

    def __init__(self, where: Path, store: TinyDisk):
        self.where, self.store = where, store
        self.mounted = LoopMount(sparse_image(store, "ext4.img", self.IMAGE, "mkfs.ext4", "-q", "-F"), where, "sync")

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
        self.mounted.unmount()
        (self.store.where / "filler").unlink()
        checked = subprocess.run(["e2fsck", "-f", "-y", str(self.mounted.image)], capture_output=True, text=True)
        assert checked.returncode in (0, 1), checked.stdout + checked.stderr  # 1: errors corrected
        self.mounted.mount()


class QuotaDisk:
    """A btrfs filesystem on a loop device mounted on `top` (its image sparse on a tmpfs of its own) with quotas
    on: `where` is a subvolume whose quota group `limit` bounds, as a user's or a project's quota bounds a shared
    disk. btrfs enforces it on root too (ext4 lets a process with CAP_SYS_RESOURCE past its quotas, and this
    kernel may lack them: CONFIG_QUOTA), so writes past it fail with EDQUOT whoever runs the tests."""

    IMAGE = 256 * 1024 * 1024  # bytes: about btrfs's smallest; sparse, its tmpfs holds what mkfs writes

    def __init__(self, top: Path, store: TinyDisk):
        self.where = top / "quota"
        self.mounted = LoopMount(sparse_image(store, "btrfs.img", self.IMAGE, "mkfs.btrfs", "-q"), top)
        command("btrfs", "quota", "enable", top)
        command("btrfs", "subvolume", "create", self.where)
        rootid = subprocess.run(["btrfs", "inspect-internal", "rootid", str(self.where)], capture_output=True,
                                text=True, check=True).stdout.strip()
        self.qgroup = f"0/{rootid}"

    def limit(self, size: str) -> None:
        """Set the quota ('64k', 'none'); what the subvolume already holds counts against it. Named by its id,
        through the filesystem's root: a change made through the subvolume itself is refused once it is over."""
        command("btrfs", "qgroup", "limit", size, self.qgroup, self.mounted.at)


@contextlib.contextmanager
def loop_disk(make: Callable[[Path, TinyDisk], T], where: Path, backing: Path, size: int, *tools: tuple[str, str]
              ) -> Iterator[T]:
    """`make(where, store)` (a FailingDisk, a QuotaDisk) with its image's tmpfs on `backing` for the block; each
    of `tools` is (command, the Debian package that has it)."""
    for tool, package in tools:
        if shutil.which(tool) is None:
            needs.missing(tool, f"Debian: apt-get install {package}; .ci/run installs it")
    with tiny_disk(backing, size) as store:
        disk = make(where, store)
        try:
            yield disk
        finally:
            disk.mounted.unmount()


def failing_disk(where: Path, backing: Path) -> contextlib.AbstractContextManager[FailingDisk]:
    """A FailingDisk on `where` for the block."""
    return loop_disk(FailingDisk, where, backing, 2 * FailingDisk.IMAGE, ("mkfs.ext4", "e2fsprogs"),
                     ("e2fsck", "e2fsprogs"))


def quota_disk(top: Path, backing: Path) -> contextlib.AbstractContextManager[QuotaDisk]:
    """A QuotaDisk mounted on `top` for the block."""
    return loop_disk(QuotaDisk, top, backing, QuotaDisk.IMAGE, ("mkfs.btrfs", "btrfs-progs"),
                     ("btrfs", "btrfs-progs"))
