"""The benchmarks trompe reads, as Inspect tasks: `inspect eval trompe/<name> -T dataset=FILE`.

One task per registered benchmark that names one (`Benchmark.inspect_task`, a plugin's included). Each reads the
local files trompe's loader for that benchmark reads (nothing is downloaded), answers with the illusion agent
unless `--solver` says otherwise, and scores as trompe does. `from trompe.tasks import blink` gives BLINK's.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai import Task, task
from inspect_ai.solver import Solver

from trompe_agents.datasets.benchmark import Benchmark
from trompe_agents.datasets.benchmarks import benchmarks

from .names import registered
from .samples import KEY, inspect_dataset
from .scorers import answer, metrics_for
from .solvers import illusion_agent


def benchmark_task(fmt: str, dataset: str, images_root: str | None, split: str | None, labels: str | None,
                   task: int | None, solver: Solver | None) -> Task:
    """One benchmark file as a task; the run's description (format, task, sample order) is its metadata."""
    if not dataset:
        raise ValueError("dataset: give the benchmark's local file or folder, e.g. -T dataset=test.csv")
    samples, run = inspect_dataset(dataset, fmt, images_root=images_root, split=split, labels=labels, task=task)
    return Task(dataset=samples, solver=solver or illusion_agent(), scorer=answer(run["format"]),
                metrics=metrics_for(run["format"]), metadata={KEY: run})


def _inspect_task(benchmark: Benchmark) -> Callable[..., Task]:
    """The benchmark's task, registered as `trompe/<inspect_task>`; --task is the illusion agent's (1 or 2),
    refused where it contradicts the benchmark's own (datasets.load.resolve_task)."""
    def benchmark_file(dataset: str = "", images_root: str | None = None, split: str | None = None,
                       labels: str | None = None, task: int | None = None, solver: Solver | None = None) -> Task:
        return benchmark_task(benchmark.name, dataset, images_root, split, labels, task, solver)

    benchmark_file.__name__ = benchmark_file.__qualname__ = str(benchmark.inspect_task)
    benchmark_file.__doc__ = benchmark.description
    return task(name=registered(str(benchmark.inspect_task)))(benchmark_file)


BENCHMARK_TASKS: dict[str, Callable[..., Task]] = {
    b.inspect_task: _inspect_task(b) for b in benchmarks().values() if b.inspect_task is not None}


def __getattr__(name: str) -> Callable[..., Task]:
    """A benchmark's task by its name (`from trompe.tasks import blink`)."""
    if name in BENCHMARK_TASKS:
        return BENCHMARK_TASKS[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
