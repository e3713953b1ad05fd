"""Fail the test run when it leaves anything behind: files in the temp dir or processes still running.

The suite gets a temp dir of its own (TMPDIR, inherited by every subprocess) and an environment marker that
every process it starts inherits. A process that starts with an empty environment (a bubblewrap sandbox's
child, `--clearenv`) carries no marker, so the suite also claims its process tree: the test process is made
the child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER), so a process whose parent died is reparented to it,
not to pid 1, and stays in the tree. At the end, anything in that dir besides pytest's own folders, any live
process that carries the marker or descends from this process or from a marked one, or any sandbox cgroup
made during the run whose owner is gone or ours, fails the run with a list of what was left.

Under pytest-xdist the controller does this for the whole run: its workers take its temp dir and marker as their
own, and it checks once they have exited (their orphans are reparented to it, the subreaper above them).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

MARKER = "TROMPE_TEST_RUN"
GRACE_S = 10.0  # processes told to stop may take a moment to exit; this waits for them, it does not sync tests

_saved = (os.environ.get("TMPDIR"), tempfile.tempdir)
_tmp = Path()
_token = ""


def activate() -> None:
    """A fresh temp dir and marker for this run (again for each run when pytest runs in-process repeatedly)."""
    global _tmp, _token
    _tmp, _token = Path(tempfile.mkdtemp(prefix="trompe-test-tmp-")), uuid.uuid4().hex
    os.environ["TMPDIR"] = str(_tmp)
    os.environ[MARKER] = _token
    tempfile.tempdir = str(_tmp)


def deactivate() -> None:
    """Remove the run's temp dir and give the process its own temp dir back."""
    shutil.rmtree(_tmp, ignore_errors=True)
    os.environ.pop(MARKER, None)
    if _saved[0] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = _saved[0]
    tempfile.tempdir = _saved[1]


def is_xdist_worker() -> bool:
    return "PYTEST_XDIST_WORKER" in os.environ


def adopt() -> None:
    """An xdist worker's temp dir and marker are its controller's, inherited through the environment."""
    global _tmp, _token
    _tmp, _token = Path(os.environ["TMPDIR"]), os.environ[MARKER]
    tempfile.tempdir = str(_tmp)


if is_xdist_worker() and os.environ.get(MARKER):
    adopt()
else:
    activate()


PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def claim_orphans() -> bool:
    """Make this process the subreaper of everything it starts (Linux); False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _processes() -> dict[int, tuple[int, bool, str]]:
    """pid -> (parent pid, carries this run's marker, command line) of every live process but zombies."""
    needle = f"{MARKER}={_token}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            if state == "Z":
                continue  # a zombie has exited; its parent (a test tool, or this process) reaps it
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            try:
                marked = needle in (entry / "environ").read_bytes().split(b"\0")
            except PermissionError:  # another user's process (a sandbox dropped to an unprivileged uid)
                marked = False
        except OSError:
            continue  # it exited while being read
        found[int(entry.name)] = (int(parent), marked, cmd)
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    global _cgroups_before
    if not is_xdist_worker() and (os.environ.get(MARKER) != _token or not _tmp.is_dir()):
        activate()
    claim_orphans()
    if not is_xdist_worker():
        _cgroups_before = cgroup_folders()


def marked_processes() -> list[tuple[int, str]]:
    """Live processes other than this one that carry this run's marker or descend from this process or from a
    marked process (a sandbox child starts with an empty environment; an orphan is reparented to this one)."""
    table = _processes()
    me = os.getpid()

    def ours(pid: int) -> bool:
        seen = set()
        while pid in table and pid not in seen:
            seen.add(pid)
            parent, marked, _ = table[pid]
            if marked or parent == me:
                return True
            pid = parent
        return False

    return sorted((pid, cmd) for pid, (_, _, cmd) in table.items() if pid != me and ours(pid))


# Folders third-party libraries keep in the temp dir by design (removed with this run's temp dir): pytest's own
# tmp_path roots, and torch's compile cache, which importing transformers' vision models creates.
NOT_OURS = ("pytest-of-", "torchinductor_")


def leftover_files() -> list[str]:
    return sorted(p.name for p in _tmp.iterdir() if not p.name.startswith(NOT_OURS))


def cgroup_folders() -> set[Path]:
    """The SEVEX sandbox cgroups (isolation/cgroup.py) of any owner, where this process would make its own."""
    from trompe_agents.sevex.isolation import cgroup

    where = cgroup.layout()
    if isinstance(where, str):
        return set()
    return {entry for parent in where.parents for entry in parent.iterdir() if cgroup.NAME.fullmatch(entry.name)}


_cgroups_before: set[Path] = set()


def leftover_cgroups() -> list[str]:
    """Sandbox cgroups made during this run and still there, but those of a live process not of this run
    (another run's on a shared machine): their owner pid is in the folder's name."""
    ours = {os.getpid(), *(pid for pid, _ in marked_processes())}
    left = []
    for folder in cgroup_folders() - _cgroups_before:
        owner = int(folder.name.split("-")[2])
        if owner in ours or not Path(f"/proc/{owner}").exists():
            left.append(str(folder))
    return sorted(left)


@pytest.hookimpl(trylast=True)  # after xdist has stopped its workers
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if is_xdist_worker():
        return  # the controller checks the whole run
    deadline = time.monotonic() + GRACE_S
    processes = marked_processes() if Path("/proc").is_dir() else []
    while processes and time.monotonic() < deadline:
        time.sleep(0.2)
        processes = marked_processes()
    files, cgroups = leftover_files(), leftover_cgroups()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if files or processes or cgroups:
        lines = [f"left in the temp dir: {name}" for name in files]
        lines += [f"cgroup left: {folder}" for folder in cgroups]
        lines += [f"still running: pid {pid}: {cmd[:200]}" for pid, cmd in processes]
        if reporter:
            reporter.write_sep("=", "the test run left things behind", red=True)
            for line in lines:
                reporter.write_line(line)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    deactivate()
