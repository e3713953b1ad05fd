"""Helpers for the SEVEX tests: the red-square dev set and a small in-process exploration with scripted models."""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

from trompe_agents.backends.base import BackendOptions
from trompe_agents.backends.function import FunctionSettings
from trompe_agents.datasets import load_dataset
from trompe_agents.datasets.base import Sample
from trompe_agents.datasets.jsonl import write_jsonl
from trompe_agents.failures import ErrorKind
from trompe_agents.messages import Usage
from trompe_agents.plugins import create_backend
from trompe_agents.records import SampleResult
from trompe_agents.sevex.evaluate import Runner
from trompe_agents.sevex.explore import ExploreConfig, Explorer
from trompe_agents.sevex.outcome import sample_result
from trompe_agents.sevex.roles import Roles
from trompe_agents.sevex.sandbox import Sandbox
from trompe_agents.sevex.tasks import Task
from trompe_agents.toolclient import ToolClient

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import scripted_models  # noqa: E402

TASK = Task("red-left", "probes", "Say whether the red square is on the left half of the image.",
            "{yes} or {no}", tags=("core",))


def function_backend(fn):
    return create_backend("function", BackendOptions(settings=FunctionSettings(function=fn)))


def sevex_result(sample_id: str, prediction: str | None, label: str | None, correct: bool = False,
                 error: str | None = None, kind: ErrorKind | None = None, raw: str | None = None,
                 usage: Usage | None = None) -> SampleResult:
    """A SEVEX sample's record as the Runner makes it, for a sample of that id and label (question unused)."""
    return sample_result(Sample(sample_id, [], "", label), prediction, correct, raw, error, kind, usage or Usage())


def write_dev_set(tmp_path: Path) -> Path:
    """Six 64x32 images, red square left in samples 0, 2, 4 (gold yes) and right in 1, 3, 5 (gold no)."""
    samples = []
    for i in range(6):
        im = Image.new("RGB", (64, 32), "white")
        x = 4 if i % 2 == 0 else 44
        ImageDraw.Draw(im).rectangle([x, 10, x + 10, 20], fill=(255, 0, 0))
        path = tmp_path / "data" / f"s{i}.png"
        path.parent.mkdir(exist_ok=True)
        im.save(path)
        samples.append(Sample(f"s{i}", [path], "Is the red square on the left?", "yes" if i % 2 == 0 else "no"))
    write_jsonl(samples, tmp_path / "data" / "probes.jsonl")
    return tmp_path / "data" / "probes.jsonl"


async def explore(out: Path, dev_file: Path, iterations: int, *, explorer=scripted_models.explorer,
                  target=scripted_models.target, task: Task = TASK, **config) -> tuple[Explorer, object]:
    """Run (or resume) an exploration in `out` with function-backend models; returns the explorer and best node."""
    dev = list(load_dataset(dev_file))
    async with Sandbox(warm=1) as sandbox, ToolClient.in_process() as tools:
        runner = await Runner.create(tools, function_backend(target), task, sandbox, concurrency=3)
        explorer_ = Explorer(out, runner, Roles(function_backend(explorer), "target"), dev,
                             ExploreConfig(iterations=iterations, **config), progress=False)
        best = await explorer_.run(resume=(out / "state.json").exists())
    return explorer_, best
