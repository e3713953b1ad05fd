"""A bound on how long a test body may run, for inputs that used to run for minutes or hours (a unique module
name, importable from every test folder). Generous by design: it catches super-linear work, not slowness."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """Raise TimeoutError in the main thread if the body runs past `seconds` (a regular expression stuck in
    backtracking is interrupted too: the engine checks for signals as it goes)."""
    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
