"""The dataset tests' scripted models (scripted_answers.py) on sys.path, as a user's own module would be."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def scripted_on_path(monkeypatch):
    """`--model scripted_answers:NAME` finds tests/datasets/scripted_answers.py."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
