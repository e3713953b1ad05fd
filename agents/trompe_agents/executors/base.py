"""The executor contract: what an executor runs (a job's workers) and how records come back to the driver.

Nothing here knows what a sample is answered with: the illusion agent's job is illusion/job.py, SEVEX's
candidate evaluation is sevex/distributed.py. Both are plain data an executor ships to its workers.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from ..datasets.base import Sample

Item = tuple[int, Sample]  # (position in the dataset, sample)
Record = dict[str, Any]


class ExecutorFailed(RuntimeError):
    """A worker died or raised: the job stops; what `deliver` already took stays taken (a rerun resumes)."""


class Executor(Protocol):
    """Computes records for samples; `deliver` is the driver's writer, called once per finished sample."""

    async def run(self, todo: list[Item], deliver: Callable[[Record], None]) -> None: ...


class Answering(Protocol):
    """An opened worker: turns one item into one result."""

    async def answer(self, item: Any) -> Any: ...


class Job(Protocol):
    """Plain data an executor ships to its workers; each builds its own worker from it (`async with`)."""

    def worker(self, share: int) -> AbstractAsyncContextManager[Answering]: ...


def per_worker(concurrency: int, workers: int) -> int:
    """Samples each worker keeps in flight so that all of them together hold `concurrency`."""
    return max(1, math.ceil(concurrency / workers))


async def drain(queue_get: Callable[[], Awaitable[Any]], worker: Answering, deliver: Callable[[Any], Any],
                lanes: int) -> None:
    """Run `lanes` coroutines that take items until the queue says stop (None), delivering each record."""

    async def lane() -> None:
        while (item := await queue_get()) is not None:
            await deliver(await worker.answer(item))

    await asyncio.gather(*(lane() for _ in range(lanes)))
