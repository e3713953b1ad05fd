"""SEVEX fixtures (the helpers live in sevex_support.py, which test modules import by name)."""

import ctypes
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sandbox_support import note_earlier  # noqa: E402
from sevex_support import write_dev_set  # noqa: E402


@pytest.fixture(autouse=True)
def earlier_processes() -> None:
    """What another test left running below this worker is not this test's leak (under xdist a worker runs
    Redis servers, pool workers and the like from earlier tests)."""
    note_earlier()


@pytest.fixture
def dev_set(tmp_path) -> Path:
    return write_dev_set(tmp_path)


@pytest.fixture(scope="module")
def subreaper():
    """This process as a child subreaper: whatever escaped a sandbox's pid namespace is re-parented here."""
    libc = ctypes.CDLL(None, use_errno=True)
    was = ctypes.c_int()
    assert libc.prctl(37, ctypes.byref(was), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER: the suite's guard may be one
    assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    yield
    libc.prctl(36, was.value, 0, 0, 0)
