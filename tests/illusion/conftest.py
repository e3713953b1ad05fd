"""Probe sets and scripted runs shared by the illusion tests."""


import pytest

from trompe_agents.datasets import load_dataset
from trompe_agents.probes import generate

FAMILIES = ["ebbinghaus", "hering", "simultaneous_contrast", "poggendorff"]


@pytest.fixture
def probe_dir(tmp_path):
    """Eight small illusion probes (two per family, genuine and counterfactual) with probes.jsonl."""
    out = tmp_path / "probes"
    generate("illusions", families=FAMILIES, n=8, seed=3, size=128, out=out, progress=False)
    return out


@pytest.fixture
def probes(probe_dir):
    return list(load_dataset(probe_dir))


@pytest.fixture
def gemini_key(monkeypatch):
    """A Gemini key in the variables the SDK reads, for runs against the loopback fake Gemini API."""
    for variable in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.setenv(variable, "test-key")
