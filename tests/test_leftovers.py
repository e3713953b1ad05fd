"""The suite's leak guard (leftovers.py) sees every process the tests start, sandbox children included.

A bubblewrap sandbox's child starts with an empty environment (`--clearenv`), so the environment marker alone
misses it; once its parent is gone it would hang under pid 1. Each case starts such a process, checks the
guard lists it, and stops it again, so the run itself leaves nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from proctree import children

import leftovers
import needs

SLEEP = shutil.which("sleep") or "/bin/sleep"


def listed(pid: int) -> bool:
    return pid in {p for p, _ in leftovers.marked_processes()}


def wait_for(path: Path) -> str:
    deadline = time.monotonic() + 10
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.05)
    return path.read_text().strip()


def wait_for_descendant(pid: int, cmdline: str) -> int:
    """The pid of the process below `pid` that runs `cmdline` (NUL-separated, as /proc shows it)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        below, todo = [], [pid]
        while todo:
            parent = todo.pop()
            todo += children(parent)
            below.append(parent)
        for child in below[1:]:
            with contextlib.suppress(OSError):
                if Path(f"/proc/{child}/cmdline").read_bytes().rstrip(b"\0") == cmdline.encode():
                    return child
        time.sleep(0.05)
    raise AssertionError(f"no process below {pid} runs {cmdline!r}")


def stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while listed(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_child_with_an_empty_environment_is_seen():
    child = subprocess.Popen([SLEEP, "60"], env={})
    try:
        assert listed(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not listed(child.pid)


def test_an_orphan_with_an_empty_environment_stays_in_the_tree(tmp_path):
    """`sh` starts `sleep` in the background with no environment and exits: the sleep's parent is gone."""
    pid_file = tmp_path / "pid"
    subprocess.run(["/bin/sh", "-c", f'env -i {SLEEP} 60 & echo $! > "{pid_file}"'], check=True, env={})
    orphan = int(wait_for(pid_file))
    try:
        assert listed(orphan), "an orphan is reparented to the test process (child subreaper), not to pid 1"
        assert int(Path(f"/proc/{orphan}/stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid()
    finally:
        stop(orphan)


def test_a_process_this_run_did_not_start_is_not_listed():
    assert 1 not in {p for p, _ in leftovers.marked_processes()}
    assert os.getpid() not in {p for p, _ in leftovers.marked_processes()}


@pytest.mark.os_sandbox
def test_a_real_sandbox_child_is_seen_once_bubblewrap_is_gone(tmp_path):
    """bubblewrap's child runs with a cleared environment; killing bwrap leaves it running, parentless."""
    needs.os_sandbox()
    sandbox = subprocess.Popen([shutil.which("bwrap"), "--ro-bind", "/", "/", "--dev", "/dev", "--clearenv",
                                "--new-session", SLEEP, "60"])
    inner = wait_for_descendant(sandbox.pid, f"{SLEEP}\0" + "60")
    sandbox.kill()
    sandbox.wait()
    try:
        assert leftovers.MARKER.encode() not in Path(f"/proc/{inner}/environ").read_bytes()
        assert listed(inner), "the sandbox child outlived bubblewrap; the guard must still see it"
    finally:
        stop(inner)
