"""The OS sandbox for tests: required in CI (a missing one fails there), skipped elsewhere without bubblewrap."""

from __future__ import annotations

import os
import select
from pathlib import Path


import needs
from trompe_agents.sevex.isolation import Isolation


def require_os_sandbox() -> Isolation:
    """bubblewrap, or a failure under CI=true, or a skip on a developer machine without it."""
    return needs.os_sandbox()


def descendants(pid: int | None = None) -> set[int]:
    """Live (not zombie) processes below `pid` (default: this one), read from /proc, not from our own code."""
    found: set[int] = set()
    todo = [pid or os.getpid()]
    while todo:
        parent = todo.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except FileNotFoundError:
                continue
            for child in children:
                state = _state(child)
                if state is None:
                    continue
                if state != "Z":
                    found.add(child)
                todo.append(child)
    return found


def _state(pid: int) -> str | None:
    """The process's state letter from /proc (Z: dead, not yet reaped); None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def zombies() -> set[int]:
    """Dead, unreaped children of this process (what an orphaned sandbox leaves when we are a subreaper)."""
    return {int(child) for task in Path(f"/proc/{os.getpid()}/task").iterdir()
            for child in (task / "children").read_text().split() if _state(int(child)) == "Z"}


def survivors(timeout: float = 15.0) -> set[int]:
    """Our descendants still alive once each has had `timeout` seconds to exit (a pidfd says when, no polling)."""
    for pid in descendants():
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            select.select([fd], [], [], timeout)
        finally:
            os.close(fd)
    return descendants()
