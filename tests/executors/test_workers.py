"""`illusion-agent run --workers N`: worker processes answer, the driver alone writes, kills resume."""

import json
import signal
import time
from pathlib import Path

import pytest

from trompe_agents.executors import create_executor
from trompe_agents.illusion.runmeta import read_meta
from trompe_agents.trace import read_events

from proctree import children

from executorkit import comparable, gate, result_lines, run_cli, spec_for


def finished(proc) -> str:
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr.decode()
    return stdout.decode()


@pytest.mark.slow
def test_worker_processes_give_the_same_results_as_one_process(probe_dir, probes, tmp_path):
    here, there = tmp_path / "here", tmp_path / "there"
    finished(run_cli(probe_dir, here, model="scripted:line_then_yes"))
    finished(run_cli(probe_dir, there, "--workers", "2", model="scripted:line_then_yes"))
    assert comparable(there) == comparable(here)
    assert len(result_lines(there)) == len(probes)  # one line per sample: only the driver wrote
    for record in comparable(there):  # each worker wrote the trace of the samples it answered
        assert [e["event"] for e in read_events(there / record["trace"])].count("final") == 1


def test_workers_must_be_positive():
    with pytest.raises(ValueError, match="workers must be at least 1, got 0"):
        create_executor("local", spec_for(Path("run")), workers=0)


def wait_gone(pids: set[int], timeout: float = 30) -> set[int]:
    """The pids still alive after up to `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while pids and time.monotonic() < deadline:
        pids = {p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in _state(p)}
        time.sleep(0.05)
    return pids


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return "Z"


@pytest.mark.slow
def test_driver_killed_with_sigkill_takes_its_workers_and_resumes(probe_dir, probes, tmp_path):
    out = tmp_path / "run"
    proc = run_cli(probe_dir, out, "--workers", "2")
    deadline = time.monotonic() + 120
    while len(result_lines(out)) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    workers = set(children(proc.pid))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = [json.loads(line) for line in result_lines(out)]
    assert 2 <= len(before) < len(probes), "the kill should land mid-run"
    assert workers and not wait_gone(workers), "worker processes outlived the killed driver"

    gate(out).touch()
    finished(run_cli(probe_dir, out, "--workers", "2"))
    after = [json.loads(line) for line in result_lines(out)]
    assert sorted(r["id"] for r in after) == sorted(s.id for s in probes)  # each sample exactly once
    assert after[: len(before)] == before
    assert len(read_meta(out)["invocations"]) == 2
