"""One writer per run folder, with real processes: a second run into a busy folder exits at once naming the holder's
pid and answers nothing; a holder killed with SIGKILL leaves no lock, and the next run takes the folder over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from trompe_agents.illusion.lock import RunBusy, RunLock

from .test_run import lines, run_cli


def wait_for(condition, proc, seconds: float = 120) -> None:
    """Poll until `condition()` (a generous bound for a stuck machine, not a timing check)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert condition(), proc.poll() is not None and proc.communicate()[1].decode()


def test_a_second_run_exits_at_once_and_a_killed_holder_is_taken_over(probe_dir, probes, tmp_path):
    out, gate = tmp_path / "run", tmp_path / "gate"
    first = run_cli(probe_dir, out, gate)  # answers three samples, then hangs holding the folder
    wait_for(lambda: len(lines(out)) >= 3, first)
    second = run_cli(probe_dir, out, gate)
    _, stderr = second.communicate(timeout=60)  # at once: it never waits on the hanging model
    assert second.returncode == 1
    assert f"is being written by another run (pid {first.pid})" in stderr.decode()
    assert len(lines(out)) == 3 and first.poll() is None  # the second answered nothing; the first is untouched

    first.send_signal(signal.SIGKILL)
    first.wait()
    gate.touch()  # from here on the model answers at once
    third = run_cli(probe_dir, out, gate)
    stdout, stderr = third.communicate(timeout=120)
    assert third.returncode == 0, stderr.decode()
    ids = [json.loads(line)["id"] for line in lines(out)]
    assert sorted(ids) == sorted(s.id for s in probes)  # each sample answered exactly once over the three runs


def test_two_runs_started_together_never_both_answer(probe_dir, probes, tmp_path):
    out = tmp_path / "run"
    runs = [run_cli(probe_dir, out, tmp_path / "gate", model="slow_line_then_yes") for _ in range(2)]
    results = [proc.communicate(timeout=120) for proc in runs]
    codes = sorted(proc.returncode for proc in runs)
    # overlapping (as nearly always): one is turned away; one starting after the other ended resumes a done run
    assert codes in ([0, 1], [0, 0]), [err.decode() for _, err in results]
    assert len(lines(out)) == len(probes)  # 8 lines for 8 samples, never 16


def test_the_lock_file_names_the_live_holder_and_outlives_it(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from trompe_agents.illusion.lock import RunLock
        with RunLock({str(tmp_path)!r}):
            print("held", flush=True)
            time.sleep(120)
        """)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b"held\n"
        with pytest.raises(RunBusy, match=rf"\(pid {holder.pid}\); wait for it to finish, stop it, or choose "):
            with RunLock(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / "run.lock").read_text() == f"{holder.pid}\n"  # a stale file, but no lock:
    with RunLock(tmp_path):
        assert (tmp_path / "run.lock").read_text() == f"{os.getpid()}\n"
