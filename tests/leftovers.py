"""Fail the test run when it leaves anything behind: files in the temp dir or processes still running.

The suite gets a temp dir of its own (TMPDIR, inherited by every subprocess) and an environment marker that
every process it starts inherits. At the end, anything in that dir besides pytest's own folders, or any live
process that carries the marker, fails the run with a list of what was left.
"""

from __future__ import annotations

import os
import shutil
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


activate()


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get(MARKER) != _token or not _tmp.is_dir():
        activate()


def marked_processes() -> list[tuple[int, str]]:
    """Live processes other than this one whose environment carries this run's marker."""
    found = []
    needle = f"{MARKER}={_token}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue  # a zombie has exited; its parent (a test tool) reaps it
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        found.append((int(entry.name), cmd))
    return found


# Folders third-party libraries keep in the temp dir by design (removed with this run's temp dir): pytest's own
# tmp_path roots, and torch's compile cache, which importing transformers' vision models creates.
NOT_OURS = ("pytest-of-", "torchinductor_")


def leftover_files() -> list[str]:
    return sorted(p.name for p in _tmp.iterdir() if not p.name.startswith(NOT_OURS))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    deadline = time.monotonic() + GRACE_S
    processes = marked_processes() if Path("/proc").is_dir() else []
    while processes and time.monotonic() < deadline:
        time.sleep(0.2)
        processes = marked_processes()
    files = leftover_files()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if files or processes:
        lines = [f"left in the temp dir: {name}" for name in files]
        lines += [f"still running: pid {pid}: {cmd[:200]}" for pid, cmd in processes]
        if reporter:
            reporter.write_sep("=", "the test run left things behind", red=True)
            for line in lines:
                reporter.write_line(line)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    deactivate()
