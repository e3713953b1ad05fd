"""A scripted model for a run's subprocesses whose answers wait on a gate file, so a test's fault lands mid-run
however slow the machine is (tests/illusion must be on PYTHONPATH, for `scripted`)."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

from scripted import line_then_yes


async def two_answers_then_the_gate(messages, tools):
    """As line_then_yes, but once two answers were given (counted beside TROMPE_TEST_GATE, so worker processes
    share the count; two racing may give a third) each further answer waits until the gate file exists."""
    gate = Path(os.environ["TROMPE_TEST_GATE"])
    given = gate.parent / f"{gate.name}.answers"
    given.mkdir(exist_ok=True)
    reply = line_then_yes(messages, tools)
    if isinstance(reply, dict):
        while len(list(given.iterdir())) >= 2 and not gate.exists():
            await asyncio.sleep(0.05)
        (given / uuid.uuid4().hex).touch()
    return reply
