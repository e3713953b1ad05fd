"""Scripted models whose worker process dies under them (imported by name by `--model dying_models:NAME`)."""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path

from scripted import line_then_yes


# how a worker dies, by TROMPE_TEST_DEATH: the exit of a crashing extension, the OOM killer's SIGKILL, a segfault
DEATHS = {"exit": lambda: os._exit(3), "SIGKILL": lambda: os.kill(os.getpid(), signal.SIGKILL),
          "SIGSEGV": lambda: os.kill(os.getpid(), signal.SIGSEGV)}


def dies_after_two(messages, tools):
    """As line_then_yes, but once two answers were given (counted beside TROMPE_TEST_GATE, so every worker
    shares the count) the process answering dies on the spot (as TROMPE_TEST_DEATH says, by default exit code
    3), unless the gate file exists."""
    gate = Path(os.environ["TROMPE_TEST_GATE"])
    given = gate.parent / f"{gate.name}.answers"
    given.mkdir(exist_ok=True)
    if messages[-1].role != "user" and len(list(given.iterdir())) >= 2 and not gate.exists():
        DEATHS[os.environ.get("TROMPE_TEST_DEATH", "exit")]()  # no exception, no flush
    reply = line_then_yes(messages, tools)
    if isinstance(reply, dict):
        (given / uuid.uuid4().hex).touch()
    return reply


def target_dies(messages, tools):
    """A SEVEX target whose worker process dies at its first question (the explorer runs in the driver)."""
    os._exit(3)
