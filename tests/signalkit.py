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
from typing import Any


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _default_signals() -> None:
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


# Popen keywords: `cmd &` in a script (SIGINT ignored, a session of its own: no terminal, no job control)...
AS_A_SCRIPT: dict[str, Any] = {"preexec_fn": _ignore_sigint, "start_new_session": True, "stdin": subprocess.DEVNULL}
# ...and a command typed at a terminal (whatever the test runner itself was started with)
AS_A_TERMINAL: dict[str, Any] = {"preexec_fn": _default_signals}
STARTS = {"script": AS_A_SCRIPT, "terminal": AS_A_TERMINAL}


def kill_session(leader: int) -> None:
    """SIGKILL every process in the session `leader` began (start_new_session=True): its process group alone
    misses what put itself in a group of its own, as Ray's workers do."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.getsid(int(entry)) == leader:
                os.kill(int(entry), signal.SIGKILL)
