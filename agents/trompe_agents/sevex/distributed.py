"""SEVEX candidate evaluation on an executor: each worker runs the target model on its share of the dev samples.

The worker builds its own target backend, tool server and OS sandbox from plain data; the explorer (the
driver) receives every outcome and keeps all run state, as with local evaluation.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace

from ..backends.base import BackendOptions
from ..datasets.base import Sample
from ..executors import Executor, create_executor
from ..executors.base import Item
from ..toolserver import ServerChoice
from .evaluate import Runner
from .outcome import Evaluated
from .sandbox import SandboxLimits
from .tree import Implementation


@dataclass(frozen=True)
class EvalJob:
    """One visual prompt to evaluate, as plain data a worker process (or Ray actor) can rebuild everything from."""

    target: str
    options: BackendOptions
    task: str
    task_description: str | None
    sandbox: str = "auto"  # isolation by name: bwrap (the default), or none when asked for
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    server: ServerChoice = field(default_factory=ServerChoice)
    implementation: Implementation = field(default_factory=lambda: Implementation("", ""))

    def worker(self, share: int) -> EvalWorker:
        return EvalWorker(self)


class EvalWorker:
    """A worker's target, tool server and sandbox, opened once for all the samples it evaluates."""

    def __init__(self, job: EvalJob):
        self.job = job
        self._stack = AsyncExitStack()
        self.runner: Runner | None = None

    async def __aenter__(self) -> EvalWorker:
        from ..plugins import create_backend
        from .isolation import choose
        from .sandbox import Sandbox
        from .tasks import get_task

        job = self.job
        target = create_backend(job.target, job.options)
        tools = await self._stack.enter_async_context(job.server.client())
        sandbox = Sandbox(job.limits, warm=1, isolation=choose(job.sandbox))
        self._stack.push_async_callback(sandbox.close)
        self.runner = await Runner.create(tools, target, get_task(job.task, job.task_description), sandbox, 1)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def answer(self, item: Item) -> tuple[int, Evaluated]:
        position, sample = item
        outcomes = await self.runner.evaluate(self.job.implementation, [sample])
        return position, outcomes[0]


@dataclass
class Distributed:
    """An Evaluator (evaluate.py) that hands each candidate's samples to an executor instead of this process."""

    job: EvalJob
    executor: str = "local"
    workers: int = 2
    concurrency: int = 4
    ray_address: str | None = None

    def executor_for(self, implementation: Implementation) -> Executor:
        job = replace(self.job, implementation=implementation)
        executor = create_executor(self.executor, job, workers=self.workers, concurrency=self.concurrency,
                                   ray_address=self.ray_address)
        if executor is None:  # --workers 1 with the local executor still means: in a worker process
            from ..executors.processes import ProcessExecutor

            executor = ProcessExecutor(job, workers=1, concurrency=self.concurrency)
        return executor

    async def evaluate(self, impl: Implementation, samples: list[Sample]) -> list[Evaluated]:
        return await evaluate_on(self.executor_for(impl), samples)


async def evaluate_on(executor: Executor, samples: list[Sample]) -> list[Evaluated]:
    """Every sample's outcome, in the samples' order."""
    outcomes: dict[int, Evaluated] = {}
    deliver: Callable[[tuple[int, Evaluated]], None] = lambda pair: outcomes.__setitem__(*pair)  # noqa: E731
    try:
        await executor.run(list(enumerate(samples)), deliver)
    finally:
        from .isolation.cgroup import remove_abandoned

        remove_abandoned()  # the sandbox folders of a worker that died or was stopped mid-run
    return [outcomes[i] for i in range(len(samples))]
