"""The benchmarks trompe reads, as Inspect tasks: `inspect eval trompe/<name> -T dataset=FILE`.

Each task reads the local files trompe's loader for that benchmark reads (nothing is downloaded), answers with
the illusion agent unless `--solver` says otherwise, and scores as trompe does.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.solver import Solver

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


@task(name=registered("datacv_task1"))
def datacv_task1(dataset: str = "", images_root: str | None = None, labels: str | None = None,
                 solver: Solver | None = None) -> Task:
    """DataCV 2026 Task I: yes/no about a classic illusion (test.csv; image paths relative to it)."""
    return benchmark_task("datacv1", dataset, images_root, None, labels, 1, solver)


@task(name=registered("datacv_task2"))
def datacv_task2(dataset: str = "", images_root: str | None = None, labels: str | None = None,
                 solver: Solver | None = None) -> Task:
    """DataCV 2026 Task II: 4-way multiple choice (test.json; images under images_root)."""
    return benchmark_task("datacv2", dataset, images_root, None, labels, 2, solver)


@task(name=registered("blink"))
def blink(dataset: str = "", images_root: str | None = None, split: str | None = None,
          solver: Solver | None = None) -> Task:
    """BLINK: multiple choice over 1-4 images, per-subtask accuracy (parquet file or snapshot folder)."""
    return benchmark_task("blink", dataset, images_root, split, None, 2, solver)


@task(name=registered("blindtest"))
def blindtest(dataset: str = "", images_root: str | None = None, split: str | None = None,
              solver: Solver | None = None) -> Task:
    """BlindTest (VLMs Are Blind): counts, letters and yes/no, per-task accuracy (parquet)."""
    return benchmark_task("blindtest", dataset, images_root, split, None, None, solver)


@task(name=registered("hallusionbench"))
def hallusionbench(dataset: str = "", images_root: str | None = None, split: str | None = None,
                   solver: Solver | None = None) -> Task:
    """HallusionBench: yes/no, aAcc/qAcc/fAcc by the official and lmms-eval rules (JSON or parquet)."""
    return benchmark_task("hallusionbench", dataset, images_root, split, None, 1, solver)


@task(name=registered("illusionvqa"))
def illusionvqa(dataset: str = "", images_root: str | None = None, split: str | None = None,
                solver: Solver | None = None) -> Task:
    """IllusionVQA: multiple choice with up to 8 options (parquet, JSONL or JSON)."""
    return benchmark_task("illusionvqa", dataset, images_root, split, None, 2, solver)


@task(name=registered("vstar"))
def vstar(dataset: str = "", images_root: str | None = None, solver: Solver | None = None) -> Task:
    """V* Bench: multiple choice about small details of large images (test_questions.jsonl)."""
    return benchmark_task("vstar", dataset, images_root, None, None, 2, solver)


@task(name=registered("probes"))
def probes(dataset: str = "", task: int | None = None, solver: Solver | None = None) -> Task:
    """trompe's own probe sets (`trompe probes generate`): a folder with probes.jsonl."""
    return benchmark_task("jsonl", dataset, None, None, None, task, solver)
