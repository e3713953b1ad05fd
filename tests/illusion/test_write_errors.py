"""A run folder whose disk refuses writes (full, read-only, failing with EIO): the run stops at once with one line
naming --out and the first error, no torn line is left, and a rerun once the disk is fixed ends as a clean run
does. On a real tmpfs of its own, or a real ext4 on a loop device that fails (diskkit.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from diskkit import failing_disk, quota_disk, tiny_disk
from trompe_agents.backends.base import BackendError
from trompe_agents.backends.function import FunctionBackend
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.results import RESULTS
from runlines import written
from signalkit import STARTS, kill_session
from trompe_agents.illusion.runner import RunFolderUnwritable, run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.toolclient import ToolClient

from .illusion_runs import command, run_env, wait_until
from .scripted import line_then_yes

SMALL = 96 * 1024  # bytes: run.json and the first few samples' traces fit, not all eight
# seconds: a bound for a run that hangs (the fault this guards against), not a timing check. Ray's start alone is
# about 18 CPU-seconds (bench/README.md, "Ray against the process executor"): a minute of wall time at a load of 6.
RUN_BOUND = {"ray": 900, "other": 240}


def outcome(out: Path) -> dict:
    """What must equal a clean run's: each sample's answer, score, calls and failure."""
    return {i: (r["answer"], r["correct"], r["tool_calls"], r["error_kind"]) for i, r in written(out).items()}


def whole_lines(out: Path) -> list[dict]:
    """Every line of results.jsonl, each of which must be a whole record."""
    text = (out / RESULTS).read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), f"a torn last line: {text[-120:]!r}"
    return [json.loads(line) for line in text.splitlines()]


def start_illusion_run(probe_dir: Path, out: Path, *extra: str, temp: Path | None = None,
                       gate: Path | None = None) -> subprocess.Popen:
    """`illusion-agent run` as a script starts it: no terminal, stdin closed, a session of its own (so a run over
    its bound is ended with everything it started, Ray's daemons included, which would otherwise outlive it as
    orphans of this test process); `temp` its TMPDIR; with `gate`, the model is scripted.gated_line_then_yes."""
    env = run_env(gate, **({"TMPDIR": str(temp)} if temp is not None else {}))
    model = "scripted:gated_line_then_yes" if gate else "scripted:line_then_yes"
    return subprocess.Popen(command(probe_dir, out, *extra, model=model), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **STARTS["script"])


def finish(run: subprocess.Popen, bound: float = RUN_BOUND["other"]) -> subprocess.CompletedProcess:
    """Wait for a run started by start_illusion_run, ending it and all it started past `bound` seconds."""
    with run:
        try:
            stdout, stderr = run.communicate(timeout=bound)
        except subprocess.TimeoutExpired:
            kill_session(run.pid)
            stdout, stderr = run.communicate()
            raise AssertionError(f"the run did not end within its bound:\n{stderr[-3000:]}") from None
    return subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr)


def illusion_run(probe_dir: Path, out: Path, *extra: str, temp: Path | None = None,
                 gate: Path | None = None) -> subprocess.CompletedProcess:
    """A whole run, as start_illusion_run starts it."""
    return finish(start_illusion_run(probe_dir, out, *extra, temp=temp, gate=gate),
                  RUN_BOUND["ray" if "ray" in extra else "other"])


@pytest.mark.parametrize("executor", [
    pytest.param([], id="default"), pytest.param(["--workers", "2"], id="workers", marks=pytest.mark.slow),
    pytest.param(["--executor", "ray", "--workers", "2"], id="ray",
                 marks=[pytest.mark.slow, pytest.mark.timeout(3 * RUN_BOUND["ray"] + 60)])])
def test_a_full_disk_stops_the_run_with_one_line_and_a_rerun_after_space_matches_a_clean_run(probe_dir, tmp_path,
                                                                                           executor, request):
    temp = None
    if "ray" in executor:
        pytest.importorskip("ray", reason="the [ray] extra is not installed (pip install 'trompe[ray]')")
        temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # Ray's socket paths must stay under 108 bytes
        request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))  # the local instance's session files
    clean = illusion_run(probe_dir, tmp_path / "clean", *executor, temp=temp)
    assert clean.returncode == 0, clean.stderr[-3000:]
    with tiny_disk(tmp_path / "disk", SMALL) as disk:
        out = disk.where / "run"
        full = illusion_run(probe_dir, out, *executor, temp=temp)
        assert full.returncode == 1, full.stderr[-3000:]
        said = full.stderr.strip().splitlines()  # "8 samples from ..." (and Ray's own notes), then why it ended
        assert said[-1].startswith(f"illusion-agent run: --out {out}: "), full.stderr[-3000:]
        assert "No space left on device" in said[-1] and said[-1].endswith("rerun the same command to resume")
        assert not [line for line in said[:-1] if "Errno" in line or "Traceback" in line], full.stderr[-3000:]
        kept = whole_lines(out)
        assert len(kept) < len(outcome(tmp_path / "clean")), "the disk should fill mid-run"
        disk.remount("size=64m")
        again = illusion_run(probe_dir, out, *executor, temp=temp)
        assert again.returncode == 0, again.stderr[-3000:]
        whole_lines(out)
        assert outcome(out) == outcome(tmp_path / "clean")


class AnswersThree:
    """line_then_yes for three samples; the vendor fails the rest (they are redone by --retry-errors)."""

    def __init__(self):
        self.answers = 0

    def __call__(self, messages, tools):
        if self.answers >= 3:
            raise BackendError("vendor at http://127.0.0.1: m: server: 500 it failed", "server")
        reply = line_then_yes(messages, tools)
        self.answers += isinstance(reply, dict)
        return reply


async def test_a_run_folder_on_a_disk_turned_read_only_stops_the_run_naming_out_and_resumes_after(probes, tmp_path):
    """As ext4's errors=remount-ro leaves a failing disk: the next write is refused with EROFS."""
    config = AgentConfig(task=1)
    backend = FunctionBackend(line_then_yes, "scripted")
    async with ToolClient.in_process() as tools:
        await run_samples(probes, backend, tools, config, RunOptions(out=tmp_path / "clean", progress=False))
        with tiny_disk(tmp_path / "disk", 16 * 1024 * 1024) as disk:
            out = disk.where / "run"
            failing = FunctionBackend(AnswersThree(), "scripted")
            await run_samples(probes, failing, tools, config, RunOptions(out=out, progress=False, concurrency=1))
            disk.remount("ro")
            again = RunOptions(out=out, progress=False, retry_errors=True)
            with pytest.raises(RunFolderUnwritable) as stopped:
                await run_samples(probes, backend, tools, config, again)
            assert str(stopped.value).startswith(f"--out {out}: ") and "Read-only file system" in str(stopped.value)
            disk.remount("rw")
            await run_samples(probes, backend, tools, config, again)
            whole_lines(out)
            assert outcome(out) == outcome(tmp_path / "clean")


def test_a_disk_failing_with_eio_stops_the_run_with_one_line_and_a_rerun_after_repair_matches_a_clean_run(
        probe_dir, tmp_path):
    """A real I/O error: ext4 on a loop device whose image can no longer grow (diskkit.FailingDisk)."""
    with failing_disk(tmp_path / "disk", tmp_path / "backing") as disk:
        fault_mid_run(probe_dir, tmp_path, disk.where / "run", disk.fail, "Input/output error", disk.repair)


def test_a_run_folder_over_its_quota_stops_the_run_with_one_line_and_a_rerun_after_matches_a_clean_run(
        probe_dir, tmp_path):
    """A real EDQUOT: the run folder in a btrfs subvolume whose quota is cut below what it holds
    (diskkit.QuotaDisk), then lifted."""
    with quota_disk(tmp_path / "disk", tmp_path / "backing") as disk:
        fault_mid_run(probe_dir, tmp_path, disk.where / "run", lambda: disk.limit("4k"), "Disk quota exceeded",
                      lambda: disk.limit("none"))


def fault_mid_run(probe_dir: Path, tmp_path: Path, out: Path, fault: Callable[[], None], error: str,
                  fix: Callable[[], None]) -> None:
    """`fault` strikes the disk under `out` once three samples are recorded (the model waits at the fourth until
    the gate opens, however slow the machine): the run stops with one line naming --out and `error`, every line
    whole; after `fix`, the same command ends as a clean run does."""
    opened = tmp_path / "open" / "gate"  # the clean run's gate: open from the start
    opened.parent.mkdir()
    opened.touch()
    clean = illusion_run(probe_dir, tmp_path / "clean", gate=opened)
    assert clean.returncode == 0, clean.stderr[-3000:]
    gate = tmp_path / "gate"
    run = start_illusion_run(probe_dir, out, "--concurrency", "1", gate=gate)
    wait_until(lambda: len(written(out)) >= 3, run, RUN_BOUND["other"])
    fault()
    gate.touch()
    failed = finish(run)
    assert failed.returncode == 1, failed.stderr[-3000:]
    said = failed.stderr.strip().splitlines()
    assert said[-1].startswith(f"illusion-agent run: --out {out}: "), failed.stderr[-3000:]
    assert error in said[-1] and said[-1].endswith("rerun the same command to resume"), said[-1]
    assert not [line for line in said[:-1] if "Errno" in line or "Traceback" in line], failed.stderr[-3000:]
    assert 3 <= len(whole_lines(out)) < len(outcome(tmp_path / "clean"))
    fix()
    whole_lines(out)  # what the disk kept, a failing one's journal recovered
    again = illusion_run(probe_dir, out, gate=gate)
    assert again.returncode == 0, again.stderr[-3000:]
    whole_lines(out)
    assert outcome(out) == outcome(tmp_path / "clean")
