"""`--executor ray`: samples become Ray actor tasks with retries; the driver alone writes the results.

Tasks are submitted in a window (WINDOW times the samples all workers keep in flight), each to the worker
with the fewest, so the driver holds a bounded number of tasks, their arguments and their results whatever
the batch size. A worker process that dies is restarted as often as it dies; what is bounded is each
sample's retries: the run stops only when one sample's tasks died RETRIES + 1 times. A cluster that refuses
the driver's Ray token (RAY_AUTH_MODE=token, docs/scaling.md) stops the run with one line saying what to set.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator

from .base import ExecutorFailed, Item, Job, Record, per_worker

RETRIES = 4  # a sample whose worker process dies under it is run again this many times (4 deaths: still runs)
WINDOW = 2  # tasks submitted per sample a worker keeps in flight: the next ones wait queued on the actor


def _token_refused(exc: BaseException | None) -> bool:
    """Whether joining failed on Ray's token check: Ray wraps it in a ConnectionError, its text in the cause."""
    from ray.exceptions import AuthenticationError

    while exc is not None:
        if isinstance(exc, AuthenticationError) or "InvalidAuthToken" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _token_refusal(where: str, exc: BaseException) -> str:
    """The refusal, with what to set: Ray sends a token only in RAY_AUTH_MODE=token, and the head has it."""
    mode = os.environ.get("RAY_AUTH_MODE")
    sent = (("RAY_AUTH_MODE=token, but no token was found here" if "no authentication token" in str(exc) else
             "RAY_AUTH_MODE=token, so the token sent is not the cluster's") if mode == "token" else
            f"RAY_AUTH_MODE is {mode or 'not set'}, so no token was sent")
    return (f"{where}: the Ray cluster refused this driver's token ({sent}); export RAY_AUTH_MODE=token and give "
            "the cluster's token as RAY_AUTH_TOKEN, in the file named by RAY_AUTH_TOKEN_PATH, or in "
            "~/.ray/auth_token (`ray get-auth-token` on the head prints it)")


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
        from ray.exceptions import AuthenticationError

        if ray.is_initialized():
            return False
        try:
            ray.init(address=self.address, include_dashboard=False, logging_level="WARNING")
        except (ConnectionError, AuthenticationError) as exc:
            if _token_refused(exc):
                raise ValueError(_token_refusal(self._where(), exc)) from None
            raise ValueError(f"{self._where()}: cannot join the Ray cluster ({exc})") from None
        return True

    def _where(self) -> str:
        """The setting that chose the cluster, as the user gave it."""
        if self.address:
            return f"--ray-address {self.address}"
        if os.environ.get("RAY_ADDRESS"):
            return f"RAY_ADDRESS {os.environ['RAY_ADDRESS']}"
        return "--executor ray (a local Ray instance)"

    async def run(self, todo: list[Item], deliver: Callable[[Record], None]) -> None:
        import ray

        if not todo:
            return
        started = self._connect()
        count = min(self.workers, len(todo))
        lanes = per_worker(self.concurrency, count)
        cpus = min(1.0, ray.cluster_resources().get("CPU", 1.0) / count)  # agents wait on the network, not CPU
        actor = ray.remote(Answerer).options(max_concurrency=lanes, num_cpus=cpus, max_restarts=-1,
                                             max_task_retries=RETRIES)
        self.actors = [actor.remote(self.spec, count) for _ in range(count)]
        try:
            await self._submit_in_window(iter(todo), lanes * WINDOW, deliver)
        except ray.exceptions.RayTaskError as exc:  # the worker raised: retrying would raise again
            raise ExecutorFailed(f"a sample's Ray task raised {str(exc).splitlines()[-1]}; finished samples are "
                               "saved, rerun the same command to resume") from None
        except ray.exceptions.RayError as exc:
            raise ExecutorFailed(f"a sample's Ray task failed after {RETRIES} retries ({type(exc).__name__}: "
                               f"{str(exc).splitlines()[0]}); finished samples are saved, rerun the same "
                               "command to resume") from None
        finally:
            await self._close_actors()
            if started:
                ray.shutdown()

    async def _submit_in_window(self, items: Iterator[Item], per_actor: int,
                                deliver: Callable[[Record], None]) -> None:
        """Keep at most `per_actor` tasks on each actor, topping up as they finish; deliver in finishing order."""
        in_flight: dict[asyncio.Future, int] = {}  # task -> index of its actor
        held = [0] * len(self.actors)

        def submit() -> bool:
            item = next(items, None)
            if item is None:
                return False
            target = min(range(len(held)), key=held.__getitem__)
            held[target] += 1
            in_flight[asyncio.wrap_future(self.actors[target].answer.remote(item).future())] = target
            return True

        try:
            while len(in_flight) < per_actor * len(self.actors) and submit():
                pass
            while in_flight:
                done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for finished in done:
                    held[in_flight.pop(finished)] -= 1
                    deliver(finished.result())
                    submit()
        finally:
            for future in in_flight:
                future.cancel()

    async def _close_actors(self) -> None:
        import ray

        closing = [asyncio.wrap_future(a.close.remote().future()) for a in self.actors]
        await asyncio.gather(*closing, return_exceptions=True)
        for a in self.actors:
            ray.kill(a)
        self.actors = []
