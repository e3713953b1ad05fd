"""Stopping a command by signal however it was started: from a terminal, a script, nohup, a CI runner or a service.

SIGTERM and SIGHUP are handled directly, never passed on as SIGINT: a background job of a non-interactive shell
starts with SIGINT ignored, so a SIGINT raised from a handler would be dropped and the run would go on (and spend).
SIGINT and SIGHUP are honoured unless the process was started with them ignored (a script's background job, nohup):
ignoring them is then what the caller asked for. The command's main task is cancelled, as Ctrl-C does inside
asyncio.run: its cleanup runs (vendor calls in flight are cancelled, workers stopped, what is finished kept), then
Interrupted ends it with status 128 + the signal's number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
MAY_BE_IGNORED = (signal.SIGHUP, signal.SIGINT)  # left ignored when the process was started with them ignored


class Interrupted(KeyboardInterrupt):
    """The command was stopped by a signal; `status` is the exit status a shell reports for it."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def status(self) -> int:
        return 128 + self.signum


def exit_status(exc: KeyboardInterrupt) -> int:
    """130 for a plain Ctrl-C (KeyboardInterrupt), 128 + N for a signal that Interrupted stands for."""
    return exc.status if isinstance(exc, Interrupted) else 128 + signal.SIGINT


def watched_signals() -> list[signal.Signals]:
    """The stop signals this process honours: SIGTERM always, SIGHUP and SIGINT unless started ignored."""
    return [s for s in STOP_SIGNALS if s not in MAY_BE_IGNORED or signal.getsignal(s) is not signal.SIG_IGN]


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(main), stopped by the signals above: the main task is cancelled, then Interrupted is raised."""
    return asyncio.run(_stoppable(main))


async def _stoppable(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    received: list[int] = []

    def stop(signum: int) -> None:
        if not received:  # a second signal lets the cleanup of the first finish
            task.cancel()
        received.append(signum)

    # Signals reach only the main thread's loop; a command run in another thread (a test's) stops as before.
    watched = watched_signals() if threading.current_thread() is threading.main_thread() else []
    before = {signum: signal.getsignal(signum) for signum in watched}
    for signum in watched:
        loop.add_signal_handler(signum, stop, signum)
    try:
        result = await main
    except asyncio.CancelledError:
        if received:
            raise Interrupted(received[0]) from None
        raise
    finally:
        for signum in watched:  # the dispositions the command found, not asyncio's defaults
            loop.remove_signal_handler(signum)
            signal.signal(signum, before[signum])
    if received:  # the task finished its cleanup without letting the cancellation out
        raise Interrupted(received[0])
    return result
