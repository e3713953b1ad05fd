"""Inspect AI tests: skipped without inspect_ai (the `inspect` extra) except in CI, which installs it with `dev`."""

from __future__ import annotations

import importlib.util
import os

import pytest

if importlib.util.find_spec("inspect_ai") is None:
    if os.environ.get("CI"):
        raise RuntimeError("inspect_ai is missing, and CI must run tests/inspect: pip install -e '.[dev]'")
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture
def mock_model():
    """Inspect's mockllm/model playing the script."""
    from inspect_ai.model import get_model
    from inspect_scripts import inspect_script

    return get_model("mockllm/model", custom_outputs=inspect_script)


@pytest.fixture(autouse=True)
def _quiet_inspect(monkeypatch):
    """No progress display (eval_async takes none as an argument)."""
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
