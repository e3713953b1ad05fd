"""Where a batch run's samples are computed: in this process, in worker processes, or on a Ray cluster.

The driver (illusion.runner) stays the only writer of results.jsonl; an executor only turns samples into
result records and hands each one back as it finishes.
"""

from __future__ import annotations

from ..toolserver import ServerChoice
from .worker import Executor, Job, WorkerSpec

EXECUTORS = ("local", "ray")

__all__ = ["EXECUTORS", "Executor", "Job", "ServerChoice", "WorkerSpec", "create_executor"]


def create_executor(name: str, spec: Job, *, workers: int = 1, concurrency: int = 4,
                    ray_address: str | None = None) -> Executor | None:
    """None means today's path: every sample in this process, on this event loop."""
    if name not in EXECUTORS:
        raise ValueError(f"executor: {name!r} is not one of {', '.join(EXECUTORS)}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if name == "ray":
        from .ray_executor import RayExecutor

        return RayExecutor(spec, workers=workers, concurrency=concurrency, address=ray_address)
    if workers == 1:
        return None
    from .processes import ProcessExecutor

    return ProcessExecutor(spec, workers=workers, concurrency=concurrency)
