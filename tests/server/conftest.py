"""Server-test fixtures: apps with the test plugin, and the README's plugin installed as a distribution."""

from __future__ import annotations

from pathlib import Path

import pytest

from serverkit import EXAMPLE_PLUGIN, ToolkitPlugin, install_distribution


@pytest.fixture
def test_app(make_app):
    """An app with the built-in plugins plus the test plugin."""
    def factory(**kwargs):
        return make_app(extra_plugins={"testkit": ToolkitPlugin()}, **kwargs)
    return factory


@pytest.fixture
def example_site(tmp_path) -> Path:
    """A site directory holding the README's third-party plugin, installed as a distribution."""
    return install_distribution(tmp_path / "site", "trompe-posterize", {"posterize": "trompe_posterize"},
                                EXAMPLE_PLUGIN / "trompe_posterize")
