"""Admission control: pixel work in flight is reserved against the memory budget before it starts."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable

from .errors import LimitError

M_MMAP_THRESHOLD = -3  # glibc mallopt parameter
WORK_FACTOR = 2  # a call holds about two copies of what it reads: the pixels read and the result being made


class WorkBudget:
    """Bytes that tool calls are about to decode or copy; a call waits while the budget is spoken for.

    A call's first reservation waits for room; later ones of the same call never wait (it already holds
    memory, and two calls each waiting for the other's bytes would deadlock). A reservation larger than the
    whole budget waits until nothing else runs, so large images are worked on one at a time.
    """

    def __init__(self, budget: int, on_change: Callable[[int], None] = lambda reserved: None):
        self.budget = budget
        self.reserved = 0
        self.waiting = 0  # calls waiting for room, for status and tests
        self._on_change = on_change
        self._room = threading.Condition()
        self._held = threading.local()

    def admit_decode(self, nbytes: int, argument: str, size: tuple[int, int]) -> None:
        """Before decoding: refuse an image that could never fit, else reserve room for it."""
        if nbytes > self.budget:
            raise LimitError(argument, f"image is {size[0]}x{size[1]}; decoding it needs {nbytes} bytes, over the "
                             f"{self.budget}-byte memory budget (memory_budget); send a smaller image or start "
                             "the server with a larger --memory-budget")
        self.reserve(WORK_FACTOR * nbytes)

    def reserve(self, nbytes: int) -> None:
        """Hold `nbytes` (at most the whole budget) until this thread's call ends with release()."""
        nbytes = min(nbytes, self.budget)
        held = getattr(self._held, "nbytes", 0)
        with self._room:
            if held == 0:
                self.waiting += 1
                self._room.wait_for(lambda: self.reserved + nbytes <= self.budget)
                self.waiting -= 1
            self.reserved += nbytes
            self._held.nbytes = held + nbytes
            reserved = self.reserved
        self._on_change(reserved)

    def release(self) -> None:
        """Return everything this thread's call reserved."""
        held = getattr(self._held, "nbytes", 0)
        if not held:
            return
        self._held.nbytes = 0
        with self._room:
            self.reserved -= held
            reserved = self.reserved
            self._room.notify_all()
        self._on_change(reserved)


def return_freed_pixels_to_the_os() -> None:
    """Pin glibc's mmap threshold at 1 MiB, so freed image buffers leave the process at once.

    Otherwise glibc raises the threshold after the first large free and later buffers come from per-thread
    heaps that keep their peak: three calls in turn then cost as much RSS as three at once.
    """
    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(M_MMAP_THRESHOLD, 1 << 20)
