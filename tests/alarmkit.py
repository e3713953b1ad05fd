"""A bound on how long a test body may run, for inputs that used to run for minutes or hours (a unique module
name, importable from every test folder). Generous by design: it catches super-linear work, not slowness."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """Raise TimeoutError in the main thread if the body runs past `seconds` (a regular expression stuck in
    backtracking is interrupted too: the engine checks for signals as it goes). pytest-timeout's own timer
    shares SIGALRM: a tighter one is left to fire, a looser one is put back with the time it has left."""
    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    outer_left = signal.getitimer(signal.ITIMER_REAL)[0]
    if outer_left and outer_left <= seconds:
        yield
        return
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - started), 0.001))
