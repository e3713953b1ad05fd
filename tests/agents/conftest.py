"""Agent-test fixtures."""

from __future__ import annotations

import sys

import pytest
from imagekit import gradient

from trompe_kernel.manager import default_plugins

from trompe_agents.toolclient import ToolClient


@pytest.fixture
def fresh_plugins(monkeypatch, tmp_path):
    """A plugin manager that sees the distributions installed in the returned site folder, and none after."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    default_plugins.cache_clear()
    yield site
    default_plugins.cache_clear()
    for name in [name for name, module in sys.modules.items() if str(site) in str(getattr(module, "__file__", ""))]:
        del sys.modules[name]  # the next test installs other plugins under the same module names


@pytest.fixture
async def tools():
    """A tool client to a fresh in-process trompe server."""
    async with ToolClient.in_process() as client:
        yield client


@pytest.fixture
def question_png(tmp_path):
    """A small gradient image file to ask about."""
    path = tmp_path / "q.png"
    gradient(64, 48).save(path)
    return path
