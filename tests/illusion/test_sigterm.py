"""`illusion-agent run` stopped by a signal (a service stop, a job scheduler, `kill PID`, a closed terminal,
Ctrl-C) cleans up, says how to resume and exits 128 + the signal, however it was started (signalkit.py): a run
started from a script has SIGINT ignored, so SIGTERM must never be passed on as SIGINT."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from PIL import Image

from proctree import descendants, state
from signalkit import IGNORED, STARTS, kill_session
from runlines import written

from .illusion_runs import command, run_env, wait_until

BOUND = 120  # seconds: a bound for a run that ignores its signal (the fault this guards against), not a timing check
RAY_BOUND = 600  # the same for a run on Ray, whose start alone is about 18 CPU-seconds (bench/README.md)


def gated(probe_dir: Path, out: Path, *extra: str) -> list[str]:
    """A run whose model hangs after three answers until TROMPE_TEST_GATE exists (scripted.gated_line_then_yes)."""
    return command(probe_dir, out, "--concurrency", "1", *extra, model="scripted:gated_line_then_yes")


def start_run(probe_dir: Path, out: Path, env: dict[str, str], started: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(gated(probe_dir, out, *extra), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **STARTS[started])


@pytest.mark.parametrize(("signum", "started"), [(signal.SIGTERM, "script"), (signal.SIGHUP, "script"),
                                                 (signal.SIGTERM, "terminal"), (signal.SIGINT, "terminal")],
                         ids=["SIGTERM-script", "SIGHUP-script", "SIGTERM-terminal", "SIGINT-terminal"])
def test_a_signal_removes_the_spill_folder_and_says_how_to_resume(probe_dir, tmp_path, signum, started):
    """A memory budget of one and a half probe images makes the in-process server spill at the agent's first
    drawn line, so the folder exists when the signal comes; the model hangs in its call, as a slow vendor's does."""
    with Image.open(next((probe_dir / "images").iterdir())) as im:
        budget = im.width * im.height * 4 * 3 // 2  # 4 bytes a pixel, as the registry counts RGB
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = tmp_path / "run"
    env = run_env(tmp_path / "gate", TMPDIR=str(temp), TROMPE_MEMORY_BUDGET=str(budget))
    proc = start_run(probe_dir, out, env, started)
    try:
        wait_until(lambda: any(list(folder.iterdir()) for folder in temp.glob("trompe-spill-*"))
                   and len(written(out)) >= 3, proc, BOUND)  # the fourth sample's call now hangs
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=BOUND)
        assert proc.returncode == 128 + signum, err
        assert err.strip().splitlines()[-1] == "illusion-agent: interrupted; rerun the same command to resume"
        assert "Traceback" not in err
        assert not list(temp.glob("trompe-spill-*"))
    finally:  # a failed check must not leave the run waiting on its gate
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.slow  # worker processes
def test_sigterm_to_a_scripted_run_with_workers_stops_them_all_and_the_resume_completes_it(probe_dir, tmp_path):
    """`kill PID` of a driver started from a script: the workers go with it (their calls in flight cancelled),
    nothing is left running, and the same command then answers the rest."""
    stop_then_resume(probe_dir, tmp_path, "script", [signal.SIGTERM], "--workers", "2")


def test_a_nohup_run_keeps_sighup_ignored_and_stops_on_sigterm(probe_dir, tmp_path):
    """`nohup illusion-agent run ... &` asked to outlive its terminal: the SIGHUP of the terminal closing leaves the
    run going (it stays ignored, as nohup set it), the SIGTERM of a service stop still ends it and the resume
    completes it."""
    stop_then_resume(probe_dir, tmp_path, "nohup", [signal.SIGHUP, signal.SIGTERM])


@pytest.mark.slow  # a local Ray instance
@pytest.mark.timeout(3 * RAY_BOUND + 120)
def test_sigterm_to_a_scripted_ray_run_stops_ray_and_the_resume_completes_it(probe_dir, tmp_path, request):
    """`kill PID` of a driver that started a local Ray instance: its tasks are cancelled and Ray's processes (some
    in process groups of their own) all end with it; the same command then answers the rest."""
    if not os.environ.get("CI"):  # CI installs the [ray] extra: a missing Ray fails there instead of skipping
        pytest.importorskip("ray", reason="the [ray] extra is not installed (pip install 'trompe[ray]')")
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # Ray's socket paths must stay under 108 bytes
    request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))  # the local instance's session files
    stop_then_resume(probe_dir, tmp_path, "script", [signal.SIGTERM], "--executor", "ray", "--workers", "2",
                     temp=temp)


def stop_then_resume(probe_dir: Path, tmp_path: Path, started: str, signals: list[signal.Signals],
                     *extra: str, temp: Path | None = None) -> None:
    """Send `signals` in turn to a run hung at its fourth sample: it exits 143 with nothing of it left running, and
    the same command then answers the rest, keeping what the interrupted run had finished; `temp` its TMPDIR."""
    assert STARTS[started].get("start_new_session"), "a run in the test's own session could not be ended whole"
    out, env = tmp_path / "run", run_env(tmp_path / "gate", **({"TMPDIR": str(temp)} if temp else {}))
    bound = RAY_BOUND if "ray" in extra else BOUND
    proc = start_run(probe_dir, out, env, started, *extra)
    try:
        wait_until(lambda: len(written(out)) >= 3, proc, bound)
        for signum in signals:
            if signum in IGNORED[started]:  # the kernel drops an ignored signal when it is sent
                assert signum in ignored_by(proc.pid), f"{signum.name} is no longer ignored"
            tree = descendants(proc.pid)  # what the run started, whatever process group each put itself in
            proc.send_signal(signum)
        _, err = proc.communicate(timeout=bound)
        assert proc.returncode == 143, err
        assert err.strip().splitlines()[-1] == "illusion-agent: interrupted; rerun the same command to resume"
        assert "Traceback" not in err, err
        deadline = time.monotonic() + bound
        while left := alive(tree) | set(group_alive(proc.pid)):
            assert time.monotonic() < deadline, f"processes {sorted(left)} outlived the driver"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            kill_session(proc.pid)  # the run led a session of its own (a script's start): Ray's processes too
            proc.communicate()
    kept = written(out)
    (tmp_path / "gate").touch()
    again = subprocess.run(gated(probe_dir, out, *extra), env=env, capture_output=True, text=True,
                           timeout=bound * 2, **STARTS[started])
    assert again.returncode == 0, again.stderr[-3000:]
    records = written(out)
    assert len(records) == 8 and all(r["answer"] == "yes" for r in records.values())
    assert {i: records[i] for i in kept} == kept  # what the interrupted run finished was kept, not redone


def ignored_by(pid: int) -> set[signal.Signals]:
    """The signals a running process ignores, from the SigIgn mask in /proc/PID/status (proc(5))."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), 16)
    return {s for s in signal.Signals if s < signal.NSIG and mask >> (s - 1) & 1}


def alive(pids: set[int]) -> set[int]:
    """Those of `pids` still running (not zombies, which the suite reaps only at its end)."""
    return {pid for pid in pids if state(pid) not in (None, "Z")}


def group_alive(pgid: int) -> list[int]:
    """The live (not zombie) processes of a process group, from /proc: the suite reaps orphans only at its end
    (leftovers.py makes it their subreaper), so a signal-0 probe would count the dead too."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # it exited meanwhile
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive
