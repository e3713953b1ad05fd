"""CPU time of the processes a bench started: itself and its descendants, read from Linux /proc; a process's
state; and a wait for processes to end (tests/sevex/sandbox_support.py uses these too).

Machine-wide counters (/proc/stat) also count every other job on a shared box; these count only the run's own
processes (the driver, worker processes, Ray's processes, a fake vendor), so samples per CPU-second hold however
loaded the machine is. psutil is not a dependency of trompe; /proc/<pid>/stat is all this needs.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterable
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, or None once the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def state(pid: int) -> str | None:
    """The process's state letter (R, S, Z: dead, not yet reaped, ...), or None once it is gone."""
    fields = _stat(pid)
    return fields[0] if fields is not None else None


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one live process."""
    fields = _stat(pid)
    if fields is None:
        raise ProcessLookupError(pid)
    return (int(fields[11]) + int(fields[12])) / TICKS


def children(pid: int) -> list[int]:
    """The children of every thread of `pid`, from /proc; a thread or process that ends while we read has none."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except (FileNotFoundError, ProcessLookupError):
        return found
    for task in tasks:
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def descendants(root: int) -> set[int]:
    """`root` and every live process below it, found by scanning /proc for parent ids."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


class ProcessTree:
    """Running CPU total of a process tree: its own time plus what its reaped children spent."""

    def __init__(self, root: int | None = None) -> None:
        self.root = os.getpid() if root is None else root
        self.pids = descendants(self.root)

    def refresh(self) -> None:
        """Add processes started since: call it once the workers are up (a rescan reads all of /proc)."""
        self.pids |= descendants(self.root)

    def cpu_seconds(self) -> float:
        """User + system seconds of the known processes and of the children they have waited for.

        A process that has exited drops out: once its parent reaps it, its time is in the parent's
        children's time (cutime, cstime), so nothing is counted twice."""
        total = 0
        for pid in list(self.pids):
            fields = _stat(pid)
            if fields is None:
                self.pids.discard(pid)
                continue
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        return total / TICKS


def wait_gone(pids: Iterable[int], seconds: float) -> None:
    """Until each of `pids` has ended or `seconds` have passed (a pidfd says when: no polling)."""
    deadline = time.monotonic() + seconds
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(fd)
