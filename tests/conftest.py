"""Shared fixtures: a real trompe server driven through the official MCP client, in memory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from mcp import Client
from PIL import Image

from trompe_server.app import ServerConfig, create_app
from trompe_server.limits import Limits

import needs
from imagekit import data_url, gradient

pytest_plugins = ["leftovers"]

# Property tests judge their inputs, not the box's speed: at a load of 30 on two cores, generating even small
# inputs can take longer than Hypothesis' timing checks allow (too_slow, the per-example deadline), which says
# nothing about trompe. Every other health check stays on.
settings.register_profile("loaded-box", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("loaded-box")


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Dataset loaders cache embedded images under XDG_CACHE_HOME; tests keep theirs out of the user's home."""
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    yield
    mp.undo()


def pytest_configure(config):
    config.addinivalue_line("markers", "os_sandbox: runs SEVEX-generated code through the default OS sandbox")
    # Tests run the console scripts (trompe, trompe-server, illusion-agent, sevex) by name, as a user of the
    # activated venv does: those installed beside the interpreter running the tests come first on PATH, also
    # when pytest was started as `.venv/bin/python -m pytest` without activating it.
    scripts = str(Path(sys.executable).parent)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != scripts:
        os.environ["PATH"] = os.pathsep.join(filter(None, [scripts, os.environ.get("PATH")]))


@pytest.fixture(autouse=True)
def _os_sandbox_when_marked(request):
    """Tests that run generated code need bubblewrap: skipped without it here, a failure in CI."""
    if request.node.get_closest_marker("os_sandbox") is not None:
        needs.os_sandbox()


@pytest.fixture
def models_on_path(monkeypatch):
    """`models_on_path(folder, ...)`: `--model MODULE:NAME` finds the test models in those folders, as a user's own
    modules: in this process (sys.path) and in the worker processes it starts (spawned, or Ray's: PYTHONPATH)."""
    def put(*folders: Path) -> None:
        for folder in folders:
            monkeypatch.syspath_prepend(str(folder))
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [*map(str, folders),
                                                                        os.environ.get("PYTHONPATH")])))
    return put


@pytest.fixture
def scripted_on_path(models_on_path, request):
    """The scripted models beside the test (tests/illusion/scripted.py, tests/datasets/scripted_answers.py) on the
    path, as models_on_path puts them."""
    models_on_path(request.path.parent)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def make_app(tmp_path):
    """Build a server app with chosen limits/plugins/tags; its roots default to tmp_path."""
    apps = []

    def factory(limits: Limits | None = None, **kwargs):
        kwargs.setdefault("roots", [tmp_path])
        app = create_app(ServerConfig(limits=limits or Limits(), **kwargs))
        apps.append(app)
        return app

    yield factory
    for app in apps:
        app.registry.close()


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
async def client(app):
    async with Client(app.mcp) as c:
        yield c


@pytest.fixture
async def open_image(client):
    """Open a session on an image (default: a 64x48 gradient); returns the session id."""

    async def opener(im: Image.Image | None = None, name: str = "original") -> str:
        result = await client.call_tool("open_session", {"source": data_url(im or gradient()), "name": name})
        assert not result.is_error, result.content[0].text
        return result.structured_content["session"]

    return opener
