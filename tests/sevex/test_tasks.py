"""SEVEX tasks read through the real loaders: generated BlindTest-style probes, BlindTest and BLINK parquet files.

A scripted target that knows every sample's gold answer (it recognises the first image it is shown) answers
in the benchmark's format ({N}, {Yes}, {5} {6}, (B)) or in another benchmark's, so the task's extractor must
give 1.0 for the first and 0 for the second.
"""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pytest
import scripted_models
from PIL import Image
from sevex_support import explore, function_backend

from trompe_agents.datasets import load_dataset
from trompe_agents.datasets.jsonl import write_jsonl
from trompe_agents.probes.generate import generate
from trompe_agents.sevex.evaluate import Runner
from trompe_agents.sevex.explore import NAIVE
from trompe_agents.sevex.outcome import dev_accuracy, summary
from trompe_agents.sevex.sandbox import Sandbox
from trompe_agents.sevex.tasks import get_task
from trompe_agents.testing.dataset_files import write_blindtest, write_blink
from trompe_agents.toolclient import ToolClient

pytestmark = pytest.mark.os_sandbox  # runs generated code through the OS sandbox

BLINDTEST_TASKS = ["LineIntersections", "CircledLetter", "SubwayMap", "OverlappingShapes", "NestedSquares",
                   "CountingRowsAndColumns"]
BLINK_TASKS = ["Jigsaw", "Relative_Depth", "Spatial_Relation"]
PASS_IMAGES_ON = "def main(images, question):\n    return ask_lvlm(images, PROMPT.replace('{question}', question))\n"


def _key(data: bytes) -> str:
    return hashlib.sha1(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).tobytes()).hexdigest()


def in_format(benchmark: str, gold: str) -> str:
    """A sentence stating the gold answer as the benchmark asks for it."""
    if benchmark == "blink":
        return f"Comparing the marked points, the answer is ({gold})."
    value = "} {".join(gold.split(",")) if "," in gold else gold
    return f"Looking carefully, my answer is {{{value}}}."


def other_format(benchmark: str, gold: str) -> str:
    """The answer in another benchmark's format, which this benchmark's extractor must not read."""
    return "My answer is {2}." if benchmark == "blink" else "My answer is (B)."


class Oracle:
    """A target that recognises each sample by its first image and answers with `style(benchmark, gold)`."""

    def __init__(self, samples, benchmark: str, style):
        self.gold = {_key(s.images[0].read_bytes()): s.answer for s in samples}
        self.benchmark, self.style = benchmark, style
        self.seen: list[tuple[int, str]] = []  # images and prompt of every request

    def __call__(self, messages, tools):
        images = messages[-1].images
        self.seen.append((len(images), messages[-1].text))
        return self.style(self.benchmark, self.gold[_key(images[0].data)])


def engineer_passes_images_on(messages, tools):
    """The scripted explorer, except that every program hands the inputs to the LVLM unchanged."""
    reply = scripted_models.explorer(messages, tools)
    return reply if "You are the Engineer" not in messages[0].text else {"code": PASS_IMAGES_ON, "prompt": "{question}"}


def load(path):
    """Samples of a source; parquet images are written next to the file, not to a new temporary folder."""
    return list(load_dataset(path, images_root=path.parent / f"{path.stem}-images" if path.suffix == ".parquet"
                             else None))


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """One dataset file per source, in the format its loader reads."""
    root = tmp_path_factory.mktemp("sources")
    generate(suite="blindtest", families=["line_intersections", "circled_letter", "subway_paths", "touching_circles",
                                          "nested_squares", "grid_rows_columns"], n=12, size=128,
             out=root / "probes", progress=False)
    return {"probes": root / "probes" / "probes.jsonl", "blindtest": write_blindtest(root / "blindtest.parquet", 12),
            "blink": write_blink(root / "blink.parquet", 6, images=3)}


@pytest.mark.parametrize(("source", "task_name"), [("probes", "LineIntersections"), ("blindtest", "OverlappingShapes"),
                                                  ("blink", "Jigsaw")])
async def test_small_exploration_on_a_loaded_task(tmp_path, sources, source, task_name):
    task = get_task(task_name)
    samples = task.samples(load(sources[source]))
    assert len(samples) == 2 and {s.category for s in samples} == {task_name}  # only this task's rows
    dev = sources[source].parent / f"dev-{task_name}.jsonl"  # beside the images it names, as a dataset must be
    write_jsonl(samples, dev)
    target = Oracle(samples, task.benchmark, in_format)
    explorer, best = await explore(tmp_path / "run", dev, iterations=2, task=task, explorer=engineer_passes_images_on,
                                   target=target)
    executed = explorer.tree.executed()
    assert len(executed) == 3 and all(n.reward == 1.0 for n in executed)
    assert [r["prediction"] for r in best.experiment.results] == [s.answer for s in samples]
    if source == "blink":  # all three images reach the LVLM, with the question's lettered options
        assert {n for n, _ in target.seen} == {3}
        assert all("(A) first\n(B) second" in text for _, text in target.seen)
        assert len(best.experiment.images) == 3 * len(samples)  # the Analyst sees every image of a question


@pytest.mark.parametrize("source", ["probes", "blindtest", "blink"])
async def test_each_task_reads_answers_in_its_benchmark_format(sources, source):
    everything = load(sources[source])
    async with Sandbox(warm=2) as sandbox, ToolClient.in_process() as tools:
        for task_name in BLINK_TASKS if source == "blink" else BLINDTEST_TASKS:
            task = get_task(task_name)
            samples = task.samples(everything)
            assert samples and all(s.category == task_name for s in samples)
            for style, expected in ((in_format, 1.0), (other_format, 0.0)):
                target = function_backend(Oracle(samples, task.benchmark, style))
                runner = await Runner.create(tools, target, task, sandbox, concurrency=2)
                results = [e.result for e in await runner.evaluate(NAIVE, samples)]
                assert dev_accuracy(results) == expected, (task_name, style.__name__, [summary(r) for r in results])
                if expected:
                    assert [r.answer for r in results] == [s.answer for s in samples]


async def test_a_custom_task_reads_answers_the_way_its_gold_answers_are_written(tmp_path, dev_set):
    """A --task-description task on a yes/no dev set scores '{yes}' as yes: the naive baseline gets 3 of 6."""
    task = get_task("red-left", "Say whether the red square is on the left half of the image.")
    explorer, _ = await explore(tmp_path / "run", dev_set, iterations=1, task=task)
    assert explorer.tree.root.reward == 0.5
