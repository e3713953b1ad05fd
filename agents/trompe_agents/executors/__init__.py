"""Where a batch run's samples are computed: in this process, in worker processes, or on a Ray cluster.

The driver (illusion.runner, or SEVEX's explorer) stays the only writer of results; an executor only runs a
job's workers (illusion/job.py, sevex/distributed.py) on samples and hands each record back as it finishes.
"""

from __future__ import annotations

from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins

from .base import Executor, Job

__all__ = ["Executor", "Job", "create_executor", "executor_names"]


def _local(spec: Job, *, workers: int, concurrency: int, address: str | None) -> Executor | None:
    """This machine: worker processes, or (one worker) every sample in this process."""
    if workers == 1:
        return None
    from .processes import ProcessExecutor

    return ProcessExecutor(spec, workers=workers, concurrency=concurrency)


def _ray(spec: Job, *, workers: int, concurrency: int, address: str | None) -> Executor:
    from .ray_executor import RayExecutor

    return RayExecutor(spec, workers=workers, concurrency=concurrency, address=address)


@hookimpl
def register_executors(register):
    """The built-in executors, registered as a plugin's are."""
    register("local", _local)
    register("ray", _ray)


def executor_names() -> list[str]:
    """Every executor the built-ins and the installed plugins register (`--executor` choices)."""
    return list(default_plugins().registry("register_executors", "executor"))


def create_executor(name: str, spec: Job, *, workers: int = 1, concurrency: int = 4,
                    ray_address: str | None = None) -> Executor | None:
    """None means today's path: every sample in this process, on this event loop."""
    factories = default_plugins().registry("register_executors", "executor")
    if name not in factories:
        raise ValueError(f"executor: {name!r} is not one of {', '.join(factories)}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    return factories[name](spec, workers=workers, concurrency=concurrency, address=ray_address)
