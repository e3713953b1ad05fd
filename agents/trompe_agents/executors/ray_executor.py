"""`--executor ray`: samples become Ray actor tasks with retries; the driver alone writes the results."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

from .worker import Item, Job, Record, per_worker

RETRIES = 3  # a task whose worker process dies is run again this many times (the actor is restarted too)


class Answerer:
    """A Ray actor: one worker (backend, in-process tool server, agent) answering many samples concurrently."""

    def __init__(self, spec: Job, share: int):
        self.worker = spec.worker(share)
        self._opened: asyncio.Future | None = None

    async def answer(self, item: Item) -> Record:
        if self._opened is None:  # opened on the actor's own event loop, once, by whichever call comes first
            self._opened = asyncio.ensure_future(self.worker.__aenter__())
        await self._opened
        return await self.worker.answer(item)

    async def close(self) -> None:
        """Close the tool server (and its spill folder) before the actor is killed."""
        if self._opened is not None:
            await self._opened
            await self.worker.__aexit__(None, None, None)

    def pid(self) -> int:
        return os.getpid()


class RayExecutor:
    """Spreads samples over Ray actors on a local instance or a cluster (`--ray-address`)."""

    def __init__(self, spec: Job, workers: int, concurrency: int, address: str | None = None):
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ValueError("--executor ray: Ray is not installed; pip install 'trompe[ray]'") from None
        self.spec = spec
        self.workers, self.concurrency, self.address = workers, concurrency, address
        self.actors: list = []

    def _connect(self) -> bool:
        """Join the cluster (or start a local instance); True when this call started the connection."""
        import ray

        if ray.is_initialized():
            return False
        try:
            ray.init(address=self.address, include_dashboard=False, logging_level="WARNING")
        except ConnectionError as exc:
            raise ValueError(f"--ray-address {self.address}: cannot join the Ray cluster ({exc})") from None
        return True

    async def run(self, todo: list[Item], deliver: Callable[[Record], None]) -> None:
        import ray

        if not todo:
            return
        started = self._connect()
        count = min(self.workers, len(todo))
        cpus = min(1.0, ray.cluster_resources().get("CPU", 1.0) / count)  # agents wait on the network, not CPU
        actor = ray.remote(Answerer).options(max_concurrency=per_worker(self.concurrency, count), num_cpus=cpus,
                                             max_restarts=RETRIES, max_task_retries=RETRIES)
        self.actors = [actor.remote(self.spec, count) for _ in range(count)]
        try:
            futures = [asyncio.wrap_future(self.actors[i % count].answer.remote(item).future())
                       for i, item in enumerate(todo)]
            try:
                for finished in asyncio.as_completed(futures):
                    deliver(await finished)
            except ray.exceptions.RayError as exc:
                raise RuntimeError(f"a Ray task failed after {RETRIES} retries ({type(exc).__name__}: "
                                   f"{str(exc).splitlines()[0]}); finished samples are saved, rerun the same "
                                   "command to resume") from None
            finally:
                for future in futures:
                    future.cancel()
        finally:
            await self._close_actors()
            if started:
                ray.shutdown()

    async def _close_actors(self) -> None:
        import ray

        closing = [asyncio.wrap_future(a.close.remote().future()) for a in self.actors]
        await asyncio.gather(*closing, return_exceptions=True)
        for a in self.actors:
            ray.kill(a)
        self.actors = []
