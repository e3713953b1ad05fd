"""A cgroup per sandbox, where the host lets us make one: the kernel bounds the memory of all its processes
(kernel memory included) and their number, and counts what it refused or killed.

cgroup v2 where the nearest folder at or above our own that gives its children the memory and pids
controllers is delegated to us (we may make folders and move processes there); else cgroup v1's memory and
pids hierarchies where we may make folders in both (root, in most containers), under the place this process
has in each (/proc/self/cgroup), so the host's bounds on us hold for our sandboxes too. Each sandbox's folders
are `trompe-sevex-<our pid>-<n>`, made before its launcher starts; the launcher writes itself into them
(`Layout.join_file`) before anything else, so every process of the sandbox is inside from its launcher's first
instruction. They are removed when the sandbox ends, any member left killed first; a folder whose owner pid
has no process (a SEVEX killed before it could remove it) is removed by the next SEVEX that makes one.
Standard library only, as all of the sandbox's side is.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import select
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

PREFIX = "trompe-sevex-"
NAME = re.compile(rf"{PREFIX}(\d+)-(\d+)")  # owner pid, sequence number
PROC = Path("/proc/self")  # where this process's mounts and cgroups are read (a test points it at a fake)
KILL_WAIT_SECONDS = 2.0  # how long remove() waits for a member it killed to leave the group
_numbers = itertools.count()


@dataclass(frozen=True)
class Layout:
    """Where a sandbox's folders are made and which files bound and count: one folder for both controllers
    (v2), or one per controller (v1)."""

    version: int
    memory: Path  # the folder the sandboxes' memory groups are made in
    pids: Path

    @property
    def parents(self) -> tuple[Path, ...]:
        return (self.memory,) if self.memory == self.pids else (self.memory, self.pids)

    @property
    def memory_limit(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"

    @property
    def join_file(self) -> str:
        """Where the launcher writes "0" to move itself in. v1's `tasks` moves the writing thread alone (the
        launcher has one), which the kernel does without waiting for an RCU grace period as a whole-process move
        through cgroup.procs must (~10 ms, bench/README.md); v2 moves threads only inside threaded subtrees."""
        return "cgroup.procs" if self.version == 2 else "tasks"

    @property
    def oom_counter(self) -> str:
        return "memory.events" if self.version == 2 else "memory.oom_control"

    def describe(self, memory_bytes: int, processes: int) -> str:
        """The bounds in words, for `bounds()`."""
        kernel = ("kernel and socket memory included" if self.version == 2 else
                  "kernel memory included, which this version charges to the same counter")
        return (f"cgroup v{self.version} per sandbox under {self.memory}"
                f"{'' if self.memory == self.pids else f' and {self.pids}'}: {self.memory_limit} "
                f"{memory_bytes // 2**20:,} MiB ({kernel}), pids.max {processes}")


@dataclass(frozen=True)
class Counters:
    """What the kernel counted in a sandbox's cgroup: processes its OOM killer ended, forks pids.max refused."""

    oom_kills: int
    pids_refused: int


def _decode(field: str) -> str:
    """A mountinfo path field: spaces, tabs, newlines and backslashes are octal escapes there."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mounts() -> list[tuple[str, Path, str, set[str]]]:
    """(root, mount point, file system type, super options) of every cgroup mount this process sees."""
    found = []
    for line in (PROC / "mountinfo").read_text().splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((_decode(fields[3]), Path(_decode(fields[4])), tail[0], set(tail[2].split(","))))
    return found


def _own_folder(controller: str | None) -> Path | None:
    """This process's folder in the hierarchy holding `controller` (None: the v2 hierarchy), where mounted."""
    places = {}
    for line in (PROC / "cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        for name in (controllers.split(",") if controllers else [None if number == "0" else ""]):
            places[name] = path
    path = places.get(controller)
    if path is None:
        return None
    for root, point, kind, options in _mounts():
        if (kind == "cgroup2") == (controller is None) and (controller is None or controller in options):
            relative = os.path.relpath(path, root)
            if not relative.startswith(".."):
                return (point / relative).resolve() if relative != "." else point
    return None


def _v2() -> Layout | str:
    """The nearest v2 folder at or above our own whose children get the memory and pids controllers (its
    cgroup.subtree_control lists both: one holding processes, such as ours, cannot) and where we may make
    folders and move processes into them; else why not. Nothing is enabled here: that is the host's to
    delegate (a systemd slice does for its children, and a user's own manager for the user)."""
    own = _own_folder(None)
    if own is None:
        return "no cgroup v2 mounted"
    top = next((point for _, point, kind, _ in _mounts() if kind == "cgroup2" and own.is_relative_to(point)), own)
    for folder in (own, *own.parents):
        try:
            enabled = set((folder / "cgroup.subtree_control").read_text().split())
        except OSError:
            enabled = set()
        if {"memory", "pids"} <= enabled:
            if os.access(folder, os.W_OK) and os.access(folder / "cgroup.procs", os.W_OK):
                return Layout(2, folder, folder)
            return f"cgroup v2 {folder} is not delegated to uid {os.geteuid()}"
        if folder == top:
            break
    return f"cgroup v2: no folder at or above {own} enables memory and pids for its children"


def _v1() -> Layout | str:
    """Our v1 memory and pids folders, where we may make folders in both; else why not."""
    memory, pids = _own_folder("memory"), _own_folder("pids")
    if memory is None or pids is None:
        return "no cgroup v1 memory and pids hierarchies mounted"
    for folder in (memory, pids):
        if not os.access(folder, os.W_OK):
            return f"cgroup v1 {folder} is not writable by uid {os.geteuid()}"
    return Layout(1, memory, pids)


@functools.cache
def layout() -> Layout | str:
    """Where this process makes its sandboxes' cgroups, proven by making one; else, in words, why none."""
    reasons = []
    for find in (_v2, _v1):
        try:
            found = find()
        except OSError as exc:  # no /proc/self/cgroup or mountinfo: not Linux, or /proc missing
            found = f"cgroups unreadable ({exc.strerror})"
        if isinstance(found, str):
            reasons.append(found)
            continue
        try:
            probe = SandboxCgroup.make(found, 64 * 2**20, 4)
        except OSError as exc:
            reasons.append(f"cgroup v{found.version} under {found.memory}: {exc}")
            continue
        joined = _joins(probe)
        probe.remove()
        if joined:
            return found
        reasons.append(f"cgroup v{found.version} under {found.memory}: a process cannot be moved into it")
    return "; ".join(reasons)


def _joins(group: SandboxCgroup) -> bool:
    """Whether a process of ours can write itself into the group's join files, as the launcher will."""
    join = 'for file; do echo 0 > "$file" || exit 1; done'
    try:
        return subprocess.run(["/bin/sh", "-c", join, "sh", *group.joins], stderr=subprocess.DEVNULL, env={},
                              check=False, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class SandboxCgroup:
    """One sandbox's folders, made with their limits set; `joins` are the files its launcher joins through."""

    def __init__(self, layout_: Layout, name: str):
        self.layout = layout_
        self.folders = tuple(parent / name for parent in layout_.parents)

    @classmethod
    def make(cls, layout_: Layout, memory_bytes: int, processes: int) -> SandboxCgroup:
        """Fresh folders under each parent with memory (swap included) and process bounds; none left behind
        when one step fails (OSError)."""
        for parent in layout_.parents:
            _remove_abandoned(parent)
        name = f"{PREFIX}{os.getpid()}-{next(_numbers)}"
        group = cls(layout_, name)
        try:
            for folder in group.folders:
                folder.mkdir(mode=0o755)
            memory, pids = layout_.memory / name, layout_.pids / name
            _write(memory / layout_.memory_limit, str(memory_bytes))
            swap = memory / ("memory.swap.max" if layout_.version == 2 else "memory.memsw.limit_in_bytes")
            if swap.exists():  # no swap accounting: no swap to bound
                _write(swap, "0" if layout_.version == 2 else str(memory_bytes))
            if layout_.version == 2:
                _write(memory / "memory.oom.group", "1")  # an OOM kill takes the whole sandbox
            _write(pids / "pids.max", str(processes))
        except OSError:
            group.remove()
            raise
        return group

    @property
    def joins(self) -> list[str]:
        return [str(folder / self.layout.join_file) for folder in self.folders]

    def counters(self) -> Counters:
        """The kernel's counts for this sandbox (zero where a file cannot be read)."""
        memory, pids = self.folders[0], self.folders[-1]
        return Counters(_count(memory / self.layout.oom_counter, "oom_kill"), _count(pids / "pids.events", "max"))

    def remove(self) -> bool:
        """Kill any member left, then delete the folders; False when one is still busy."""
        removed = True
        for folder in self.folders:
            _kill_members(folder)
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                removed = False
        return removed


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _count(path: Path, key: str) -> int:
    """The value of `key` in a flat keyed cgroup file ("oom_kill 1" lines)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return 0
    return next((int(value) for name, _, value in (line.partition(" ") for line in lines) if name == key), 0)


def _members(folder: Path) -> list[int]:
    try:
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _kill_members(folder: Path) -> None:
    """SIGKILL every process in `folder` and wait (a while) until each has exited, through pidfds opened
    before the members are listed again: a pid still listed then names the process its pidfd holds (or a
    member that reused it), so nothing outside the group is ever signalled."""
    pidfds = {}
    for pid in _members(folder):
        with contextlib.suppress(OSError):  # exited
            pidfds[pid] = os.pidfd_open(pid)
    still = set(_members(folder))
    for pid, pidfd in pidfds.items():
        if pid in still:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                select.select([pidfd], [], [], KILL_WAIT_SECONDS)
        os.close(pidfd)


def _remove_abandoned(parent: Path) -> None:
    """Delete the empty sandbox folders in `parent` whose owner pid has no process (its SEVEX was killed)."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            found = NAME.fullmatch(entry.name)
            if found and not Path(f"/proc/{found.group(1)}").exists():
                with contextlib.suppress(OSError):  # busy: a live sandbox of another pid namespace's SEVEX
                    entry.rmdir()


def remove_abandoned() -> None:
    """Delete the empty sandbox folders of owners that have no process, where this process makes its own: a worker
    process killed mid-run cannot remove its sandboxes' folders, so its driver calls this once its workers are gone."""
    for find in (_v2, _v1):
        with contextlib.suppress(OSError):  # cgroups unreadable: nothing was made either
            found = find()
            for parent in () if isinstance(found, str) else found.parents:
                _remove_abandoned(parent)
