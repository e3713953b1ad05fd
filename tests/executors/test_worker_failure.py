"""A worker process that dies (exit code 3, killed by SIGKILL as the OOM killer does, or by SIGSEGV) ends
`illusion-agent run --workers N` with one line and status 1 (exits.py: failed while working), never a hang nor a
traceback; the records written before stay, and the same command resumes the run."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from executorkit import gate, result_lines, run_cli


# how the worker dies -> the exit code multiprocessing reports (a signal's negated number)
DEATHS = {"exit": "exited with code 3", "SIGKILL": "was killed by SIGKILL", "SIGSEGV": "was killed by SIGSEGV"}


@pytest.mark.slow
@pytest.mark.parametrize("death", sorted(DEATHS))
def test_a_dying_worker_is_one_line_and_the_run_resumes(death, probe_dir, probes, tmp_path, monkeypatch):
    monkeypatch.setenv("TROMPE_TEST_DEATH", death)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(Path(__file__).parent),
                                                                   os.environ.get("PYTHONPATH")])))
    out = tmp_path / "run"
    proc = run_cli(probe_dir, out, "--workers", "2", model="dying_models:dies_after_two")
    try:
        _, stderr = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()  # its workers go with it (a driver killed with SIGKILL takes its workers: test_workers.py)
        proc.communicate()
        pytest.fail(f"the run did not end after its worker died ({death}): the driver waits for it for ever")
    stderr = stderr.decode()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr
    said = [line for line in stderr.splitlines() if line.startswith("illusion-agent run: ")]
    assert len(said) == 1 and re.fullmatch(
        r"illusion-agent run: --executor local: a worker process failed \(trompe-worker-\d "
        rf"{DEATHS[death]}\); finished samples are saved, rerun the same command to resume", said[0]), stderr
    before = [json.loads(line) for line in result_lines(out)]  # the records that reached the driver before
    assert before and len(before) < len(probes) and all(r["answer"] == "yes" for r in before)

    gate(out).touch()
    proc = run_cli(probe_dir, out, "--workers", "2", model="dying_models:dies_after_two")  # as the line says
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr.decode()
    after = [json.loads(line) for line in result_lines(out)]
    assert sorted(r["id"] for r in after) == sorted(s.id for s in probes)  # each sample once: none lost or redone
    assert after[: len(before)] == before
