"""How a process is started decides which signals reach it: tests start commands as a script and as a terminal do.

A background job of a non-interactive shell (a script, `nohup`, many CI runners) starts with SIGINT ignored and
no job control; `nohup` also ignores SIGHUP. A terminal starts it with every signal at its default. Either way
the command must stop on SIGTERM, and on SIGINT and SIGHUP unless they were ignored.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any


def _dispositions(ignored: tuple[signal.Signals, ...]) -> Callable[[], None]:
    """A preexec_fn giving the child exactly these stop signals ignored and the others at their default, whatever
    the test runner inherited (a suite run under `nohup` has SIGHUP ignored, and a child would keep that)."""
    def apply() -> None:
        for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN if signum in ignored else signal.SIG_DFL)
    return apply


# The stop signals a command starts with ignored: `cmd &` in a script has SIGINT ignored, `nohup cmd &` SIGHUP too,
# a command typed at a terminal none
IGNORED: dict[str, tuple[signal.Signals, ...]] = {"script": (signal.SIGINT,),
                                                  "nohup": (signal.SIGINT, signal.SIGHUP), "terminal": ()}
# Popen keywords: a script's job also runs in a session of its own (no terminal, no job control); a terminal's
# command inherits the test runner's session
AS_A_SCRIPT: dict[str, Any] = {"preexec_fn": _dispositions(IGNORED["script"]), "start_new_session": True,
                               "stdin": subprocess.DEVNULL}
BY_NOHUP: dict[str, Any] = AS_A_SCRIPT | {"preexec_fn": _dispositions(IGNORED["nohup"])}
AS_A_TERMINAL: dict[str, Any] = {"preexec_fn": _dispositions(IGNORED["terminal"])}
STARTS = {"script": AS_A_SCRIPT, "nohup": BY_NOHUP, "terminal": AS_A_TERMINAL}


def kill_session(leader: int) -> None:
    """SIGKILL every process in the session `leader` began (start_new_session=True): its process group alone
    misses what put itself in a group of its own, as Ray's workers do."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.getsid(int(entry)) == leader:
                os.kill(int(entry), signal.SIGKILL)
