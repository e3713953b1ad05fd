"""A run's driver memory is flat in the batch size: neither the dataset nor the finished records are kept.

issue 31 asks for a 100k-sample batch in a driver under 500 MB (bench/ray_driver_memory.py measures that on
Ray); here tracemalloc weighs the same code path in-process: `run_samples` over a dataset read afresh on each
iteration (as `load_dataset(..., stream=True)` gives a probe set), then the summary lines `illusion-agent run`
prints, for 25 and 250 samples. What may grow per sample is the run's compact index (id, position, content
hash: a few hundred bytes); a run that kept its records (each well over a kilobyte) or listed the dataset's
samples (each carrying probe metadata of about as much) grows several times that.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from PIL import Image

from runlines import as_lines
from trompe_agents.backends.function import FunctionBackend
from trompe_agents.datasets.base import Sample
from trompe_agents.datasets.metrics import benchmark_metrics, summary_line
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.results import RESULTS, FolderResults
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.illusion.stats import summary
from trompe_agents.toolclient import ToolClient

CONFIG = AgentConfig(task=1, router="regex", no_tools=True)
PER_SAMPLE_LIMIT = 2500  # bytes one more sample may add to the driver's peak: keeping every record adds 3.5-4.9 KB,
# a healthy run 0.4-1.0 KB (the index, and garbage awaiting the collector)


class Generated:
    """A dataset made afresh on every iteration, like a FileDataset over probes.jsonl: nothing of it is held."""

    def __init__(self, image: Path, n: int):
        self.image, self.n = image, n

    def __iter__(self) -> Iterator[Sample]:
        for i in range(self.n):
            yield Sample(f"probe-{i:06d}", [self.image], f"Are the two lines of probe {i} the same length?",
                         answer="yes" if i % 2 else "no", category="length",
                         metadata={"index": i, "family": "mueller-lyer", "magnitude": 0.1 * (i % 7),
                                   "counterfactual": i % 3 == 0, "params": {"fins": [0.1 * k for k in range(60)]},
                                   "note": "generated " * 40})


def answer(messages, tools):
    return {"reasons": "the fins mislead; measured equal " * 20, "answer": "yes"}


async def weigh(image: Path, out: Path, n: int, tools: ToolClient) -> tuple[int, str]:
    """Peak bytes tracemalloc sees above the start while `n` samples run and their summary lines are made.

    One sample at a time: each image sent is a PNG whose deflate takes about 300 KB of scratch for an instant, and
    with four samples in flight how many such instants overlap at the peak varied by up to 580 KB."""
    tracemalloc.reset_peak()
    start = tracemalloc.get_traced_memory()[0]
    records = await run_samples(Generated(image, n), FunctionBackend(answer, "scripted"), tools, CONFIG,
                                RunOptions(out=out, concurrency=1, progress=False))
    lines = f"{summary(records.values())}\n{summary_line(benchmark_metrics('jsonl', records.values()))}"
    return tracemalloc.get_traced_memory()[1] - start, lines


def test_driver_memory_does_not_grow_with_the_batch(tmp_path):
    image = tmp_path / "probe.png"
    Image.new("RGB", (16, 16), "white").save(image)
    small, large = 25, 250  # a wide gap: the peaks vary by some 200 KB from run to run

    async def main() -> tuple[tuple[int, str], tuple[int, str]]:
        async with ToolClient.in_process() as tools:
            await weigh(image, tmp_path / "warm", 5, tools)  # imports, caches and the tool list, once
            return await weigh(image, tmp_path / "small", small, tools), await weigh(image, tmp_path / "large",
                                                                                    large, tools)

    tracemalloc.start()
    try:
        (peak_small, _), (peak_large, lines) = asyncio.run(main())
    finally:
        tracemalloc.stop()
    assert (tmp_path / "large" / RESULTS).read_text().count("\n") == large  # every sample was run and written
    assert lines.startswith(f"{large} results: answered {large} (main {large}, rescue 0), failed 0; "
                            "accuracy 50.0% [")
    grown = (peak_large - peak_small) / (large - small)
    assert grown < PER_SAMPLE_LIMIT, f"driver memory grows {grown:.0f} bytes per sample (limit {PER_SAMPLE_LIMIT})"


def test_a_run_s_records_read_back_latest_first_as_the_run_left_them(tmp_path):
    """What `run_samples` returns is read from results.jsonl: the latest line per id, a torn line skipped, a
    U+2028 inside a text kept in its line, and lines appended later (another run) not part of it."""
    lines = [{"id": "a", "answer": None}, {"id": "b", "answer": "yes", "reasons": "one\u2028two"},
             {"id": "a", "answer": "no"}]
    path = tmp_path / RESULTS
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines) + '{"id": "c", "ans',
                    encoding="utf-8")
    records = FolderResults(tmp_path, path.stat().st_size)
    with path.open("a", encoding="utf-8") as f:
        f.write('\n{"id": "b", "answer": "later"}\n')
    assert as_lines(records) == {"b": lines[1], "a": lines[2]} == as_lines(dict(records.items()))
    assert [r.to_json() for r in records.values()] == [lines[1], lines[2]] and len(records) == 2
    assert records["a"].to_json() == lines[2]
    assert FolderResults(tmp_path)["b"].to_json() == {"id": "b", "answer": "later"} and "c" not in records
