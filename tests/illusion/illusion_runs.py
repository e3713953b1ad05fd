"""`illusion-agent run` started from a test as a user's script starts it, on the scripted models (scripted.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).parent  # scripted.py, for the command and its worker processes


def command(probe_dir: Path, out: Path, *extra: str, model: str = "scripted:line_then_yes") -> list[str]:
    """The run's command line, with the scripted `model`."""
    return [sys.executable, "-m", "trompe_agents.illusion.cli", "--backend", "function", "--model", model, "run",
            "--dataset", str(probe_dir), "--out", str(out), "--no-progress", *extra]


def run_env(gate: Path | None = None, **more: str) -> dict[str, str]:
    """Its environment: scripted.py importable; with `gate`, scripted.gated_line_then_yes hangs after three answers
    until that file exists."""
    env = os.environ | {"PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", **more}
    if gate is not None:
        env["TROMPE_TEST_GATE"] = str(gate)
    return env


def wait_until(condition: Callable[[], bool], proc: subprocess.Popen, bound: float) -> None:
    """Poll a condition the run reaches; fail at once, with its stderr, when it ends or stalls first."""
    deadline = time.monotonic() + bound
    while not condition():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run ended or stalled first: {proc.communicate()[1][-3000:]}")
        time.sleep(0.05)  # polling a condition the run reaches, not waiting for time to pass
