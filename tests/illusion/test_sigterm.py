"""`illusion-agent run` stopped with SIGTERM (a service stop, a job scheduler) cleans up like Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from PIL import Image

HERE = Path(__file__).parent


def test_sigterm_removes_the_spill_folder_and_says_how_to_resume(probe_dir, tmp_path):
    """A memory budget of one and a half probe images makes the in-process server spill at the agent's first
    drawn line, so the folder exists when the signal comes."""
    with Image.open(next((probe_dir / "images").iterdir())) as im:
        budget = im.width * im.height * 4 * 3 // 2  # 4 bytes a pixel, as the registry counts RGB
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = tmp_path / "run"
    env = os.environ | {"TMPDIR": str(temp), "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                        "TROMPE_TEST_GATE": str(tmp_path / "gate"),  # never opened: the run hangs after 3 answers
                        "TROMPE_MEMORY_BUDGET": str(budget)}
    proc = subprocess.Popen([sys.executable, "-m", "trompe_agents.illusion.cli", "--backend", "function",
                             "--model", "scripted:gated_line_then_yes", "run", "--dataset", str(probe_dir),
                             "--out", str(out), "--no-progress", "--concurrency", "1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:  # stop it once it is answering
            spilled = any(list(folder.iterdir()) for folder in temp.glob("trompe-spill-*"))
            if spilled and (out / "results.jsonl").exists():
                break
            time.sleep(0.05)
        assert list(temp.glob("trompe-spill-*")), "the in-process server never spilled"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert "interrupted; rerun the same command to resume" in err
        assert not list(temp.glob("trompe-spill-*"))
    finally:  # a failed check must not leave the run waiting on its gate
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
