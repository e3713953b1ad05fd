"""The exit statuses every trompe command uses, and the one way a command ends with a message.

0: done. 1: the command started and failed while working (a vendor refused mid-run, another process holds the
run folder, the port is taken). 2: the command cannot run as given (a bad option value, a missing input file, an
unknown name, options that contradict each other, a missing API key), as argparse's own usage errors. 128 + N:
interrupted by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; what was done is kept). `illusion-agent run` adds
3 (finished, some samples have no answer) and 4 (stopped early: the first samples all failed the same way).
"""

from __future__ import annotations

import sys

OK, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130
UNANSWERED, STOPPED = 3, 4  # `illusion-agent run`/`ask`: some samples have no answer; stopped early


class CommandExit(SystemExit):
    """Ends a command with its status; the message was said on stderr when it was made, and str() gives it back."""

    def __init__(self, message: str, status: int):
        super().__init__(status)
        self.message = message

    def __str__(self) -> str:
        return self.message


def exit_with(message: str, status: int = USAGE) -> CommandExit:
    """Say `message` on stderr once and give back the exception that ends the command with `status`: raise it."""
    print(message, file=sys.stderr)
    return CommandExit(message, status)
