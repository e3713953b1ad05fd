"""`illusion-agent run` stopped with SIGTERM (a service stop, a job scheduler) cleans up like Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def test_sigterm_removes_the_spill_folder_and_says_how_to_resume(probe_dir, tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = tmp_path / "run"
    env = os.environ | {"TMPDIR": str(temp), "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                        "TROMPE_TEST_GATE": str(tmp_path / "gate")}  # never opened: the run hangs after 3 answers
    proc = subprocess.Popen([sys.executable, "-m", "trompe_agents.illusion.cli", "--backend", "function",
                             "--model", "scripted:gated_line_then_yes", "run", "--dataset", str(probe_dir),
                             "--out", str(out), "--no-progress", "--concurrency", "1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:  # stop it once it is answering
        if list(temp.glob("trompe-spill-*")) and (out / "results.jsonl").exists():
            break
        time.sleep(0.05)
    assert list(temp.glob("trompe-spill-*")), "the in-process server never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted; rerun the same command to resume" in err
    assert not list(temp.glob("trompe-spill-*"))
