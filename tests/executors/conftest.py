"""Executor-test fixtures: probe sets, and scripted models importable by worker processes (helpers: executorkit)."""


import pytest

from executorkit import SCRIPTED
from trompe_agents.datasets import load_dataset
from trompe_agents.probes import generate


@pytest.fixture
def scripted_path(models_on_path):
    """The illusion tests' scripted models, for this process and its workers."""
    models_on_path(SCRIPTED)


@pytest.fixture
def probe_dir(tmp_path):
    out = tmp_path / "probes"
    generate("illusions", families=["ebbinghaus", "hering", "poggendorff"], n=6, seed=5, size=96, out=out,
             progress=False)
    return out


@pytest.fixture
def probes(probe_dir):
    return list(load_dataset(probe_dir))
