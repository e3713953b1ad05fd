"""The OS sandbox for tests: required in CI (a missing one fails there), skipped elsewhere without bubblewrap."""

from __future__ import annotations

import os
import time

import needs
from proctree import children, state, wait_gone
from trompe_agents.sevex.isolation import Isolation


def require_os_sandbox() -> Isolation:
    """bubblewrap, or a failure under CI=true, or a skip on a developer machine without it."""
    return needs.os_sandbox()


def descendants(pid: int | None = None) -> set[int]:
    """Live (not zombie) processes below `pid` (default: this one), read from /proc, not from our own code."""
    found: set[int] = set()
    todo = [pid or os.getpid()]
    while todo:
        for child in children(todo.pop()):
            letter = state(child)
            if letter is None:
                continue
            if letter != "Z":
                found.add(child)
            todo.append(child)
    return found


def zombies() -> set[int]:
    """Dead, unreaped children of this process (what an orphaned sandbox leaves when we are a subreaper)."""
    return {child for child in children(os.getpid()) if state(child) == "Z"}


EARLIER: set[int] = set()
"""Descendants alive when the running test started (a Redis, a pool worker another test left): not its leaks."""


def note_earlier() -> None:
    """Remember who was below us before this test (the autouse fixture in conftest.py calls it)."""
    EARLIER.clear()
    EARLIER.update(descendants())


def started_here() -> set[int]:
    """Live descendants this test started (those alive when it began belong to earlier tests: a Redis run as root)."""
    return descendants() - EARLIER


def survivors(timeout: float = 15.0) -> set[int]:
    """Descendants this test started that are still alive `timeout` seconds from now at the latest (a pidfd says
    when each exits, no polling). Read again after each wait: a dying process may have forked a child we could
    not see before."""
    deadline = time.monotonic() + timeout
    waited = set(EARLIER)
    while (new := descendants() - waited) and time.monotonic() < deadline:
        wait_gone(new, deadline - time.monotonic())
        waited |= new
    return started_here()
