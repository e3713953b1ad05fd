"""Ctrl-C during `sevex explore`: one line that says how to continue, never a stack of tracebacks.

The run starts as from a terminal (signalkit.py): a suite run as a script's background job has SIGINT ignored,
which `sevex explore` rightly keeps, so Ctrl-C would never land."""

from __future__ import annotations

import pytest
import json
import os
import signal
import subprocess
import sys
import time

from sevex_support import HERE
from signalkit import AS_A_TERMINAL

pytestmark = pytest.mark.os_sandbox  # runs generated code through the OS sandbox


def test_ctrl_c_prints_one_line_and_the_resume_command(tmp_path, dev_set):
    env = os.environ | {"PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "trompe_agents.sevex.cli", "explore", "--task", "probes",
                             "--dev", str(dev_set), "--explorer-backend", "function", "--explorer-model",
                             "scripted_models:explorer", "--target-backend", "function", "--target-model",
                             "scripted_models:target", "--iterations", "50", "--no-progress", "--out", str(run)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **AS_A_TERMINAL)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:  # interrupt once it is mid-run
        state = run / "state.json"
        if state.exists() and json.loads(state.read_text())["iteration"] >= 1:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before Ctrl-C could interrupt it"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == (f"sevex: interrupted; the run is checkpointed, continue it with: "
                                            f"sevex explore --out {run} --resume")
    assert "Traceback" not in err
