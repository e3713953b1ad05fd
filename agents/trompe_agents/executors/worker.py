"""What every executor's worker needs to answer samples on its own: a backend, a tool server, the agent."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..backends.base import BackendOptions
from ..datasets.base import Sample
from ..illusion.agent import AgentConfig, IllusionAgent
from ..illusion.pricing import PRICES
from ..toolserver import ServerChoice

Item = tuple[int, Sample]  # (position in the dataset, sample)
Record = dict[str, Any]


class Executor(Protocol):
    """Computes records for samples; `deliver` is the driver's writer, called once per finished sample."""

    async def run(self, todo: list[Item], deliver: Callable[[Record], None]) -> None: ...


class Answering(Protocol):
    """An opened worker: turns one item into one result."""

    async def answer(self, item: Any) -> Any: ...


class Job(Protocol):
    """Plain data an executor ships to its workers; each builds its own worker from it (`async with`)."""

    def worker(self, share: int) -> AbstractAsyncContextManager[Answering]: ...


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker process (local or on another machine) needs; plain data, so it pickles."""

    backend: str
    options: BackendOptions
    config: AgentConfig
    out: Path  # absolute: workers may run in another folder or on another machine
    server: ServerChoice = field(default_factory=ServerChoice)
    prices: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(PRICES))
    rate_limit: float | None = None  # requests per minute for the whole run; each worker gets its share

    def worker(self, share: int) -> Worker:
        return Worker(self, share)


class Worker:
    """One worker's backend, tool server and agent, opened once and reused for every sample it answers."""

    def __init__(self, spec: WorkerSpec, share: int = 1):
        self.spec, self.share = spec, share
        self._stack = AsyncExitStack()
        self.agent: IllusionAgent | None = None

    async def __aenter__(self) -> Worker:
        from ..illusion.runner import RateLimited, RateLimiter
        from ..plugins import create_backend

        spec = self.spec
        backend = create_backend(spec.backend, spec.options)
        if spec.rate_limit is not None:
            backend = RateLimited(backend, RateLimiter(spec.rate_limit / self.share))
        tools = await self._stack.enter_async_context(spec.server.client())
        self.agent = IllusionAgent(backend, tools, spec.config)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def answer(self, item: Item) -> Record:
        from ..illusion.runner import answer_one

        position, sample = item
        return await answer_one(self.agent, sample, position, self.spec.out, self.spec.config.task, self.spec.prices)


def per_worker(concurrency: int, workers: int) -> int:
    """Samples each worker keeps in flight so that all of them together hold `concurrency`."""
    return max(1, math.ceil(concurrency / workers))


async def drain(queue_get: Callable[[], Awaitable[Any]], worker: Answering, deliver: Callable[[Any], Any],
                lanes: int) -> None:
    """Run `lanes` coroutines that take items until the queue says stop (None), delivering each record."""
    import asyncio

    async def lane() -> None:
        while (item := await queue_get()) is not None:
            await deliver(await worker.answer(item))

    await asyncio.gather(*(lane() for _ in range(lanes)))
