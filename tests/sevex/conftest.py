"""SEVEX fixtures (the helpers live in sevex_support.py, which test modules import by name)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sevex_support import write_dev_set  # noqa: E402


@pytest.fixture
def dev_set(tmp_path) -> Path:
    return write_dev_set(tmp_path)
