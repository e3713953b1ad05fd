"""`--executor ray`: samples become Ray actor tasks with retries; the driver alone writes the results.

Tasks are submitted in a window (WINDOW times the samples all workers keep in flight), each to the worker
with the fewest, so the driver holds a bounded number of tasks, their arguments and their results whatever
the batch size. A worker process that dies is restarted as often as it dies; what is bounded is each
sample's retries: the run stops only when one sample's tasks died RETRIES + 1 times. A cluster that refuses
the driver's Ray token (RAY_AUTH_MODE=token, docs/scaling.md) stops the run with one line saying what to set.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

from .base import ExecutorFailed, Item, Job, Record, per_worker

RETRIES = 4  # a sample whose worker process dies under it is run again this many times (4 deaths: still runs)
WINDOW = 2  # tasks submitted per sample a worker keeps in flight: the next ones wait queued on the actor
# A local instance's workers: Ray starts them at nice 15 and kills one that has not registered within 60 s as hung,
# so on a busy machine a restarted actor's new worker can starve that long and the actor never comes back. The
# answers are the run's work, so they run at the driver's priority; a user's own setting of either is kept.
LOCAL_WORKERS = {"RAY_worker_niceness": "0", "RAY_worker_register_timeout_seconds": "600"}
CONTROL = "control"  # the actors' concurrency group for closing, beside the answers' lanes
CLOSE_GRACE = 120.0  # seconds an actor has to close its worker after the run: past it, it is killed unclosed


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


@contextlib.contextmanager
def _sigterm_kept() -> Iterator[None]:
    """ray.init sets a SIGTERM handler that exits at once (sys.exit), skipping the run's cleanup and its exit
    status (stopping.py): the handler the process had is put back."""
    kept = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if kept is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, kept)


class Answerer:
    """A Ray actor: one worker (backend, in-process tool server, agent) answering many samples concurrently.

    The worker is opened and closed by one task of its own (`_hold`): an async context manager such as the tool
    client's task group must be left by the task that entered it. `close` is called in a concurrency group of its
    own (CONTROL), so it never waits for an answer's slot; Ray runs that group on an event loop of its own, so what
    it does to the answers and the worker it hands to theirs. Answers still running are cancelled first."""

    def __init__(self, spec: Job, share: int):
        self.spec, self.share = spec, share
        self._loop: asyncio.AbstractEventLoop | None = None  # where the answers and the worker live
        self._worker: asyncio.Future | None = None  # the opened worker, once `_hold` has entered it
        self._closing = asyncio.Event()
        self._life: asyncio.Task | None = None
        self._answering: set[asyncio.Task] = set()

    async def _hold(self) -> None:
        """Enter the worker, hand it out, and leave it when `close` says so, all in this one task."""
        try:
            async with self.spec.worker(self.share) as worker:
                self._worker.set_result(worker)
                await self._closing.wait()
        except BaseException as exc:
            if not self._worker.done():  # opening failed: every answer waiting for the worker gets why
                self._worker.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            raise

    async def answer(self, item: Item) -> Record:
        if self._life is None:  # opened on the answers' event loop, once, by whichever call comes first
            self._loop = asyncio.get_running_loop()
            self._worker = self._loop.create_future()
            self._life = asyncio.ensure_future(self._hold())
        me = asyncio.current_task()
        self._answering.add(me)
        try:
            return await (await asyncio.shield(self._worker)).answer(item)
        finally:
            self._answering.discard(me)

    async def close(self) -> None:
        """Cancel what is still being answered, then close the worker (tool server, spill folder) in its task."""
        if self._life is not None:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._shut(), self._loop))

    async def _shut(self) -> None:
        for task in list(self._answering):
            task.cancel()
        await asyncio.gather(*self._answering, return_exceptions=True)
        self._closing.set()
        try:
            await self._life
        except Exception:
            if self._worker.done() and self._worker.exception() is not None:
                return  # it never opened: nothing to close, and every answer has already said why
            raise

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
        for name, value in LOCAL_WORKERS.items():  # read only by the daemons of an instance this call starts
            os.environ.setdefault(name, value)
        try:
            with _sigterm_kept():
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
        actor = ray.remote(concurrency_groups={CONTROL: 1})(Answerer).options(
            max_concurrency=lanes, num_cpus=cpus, max_restarts=-1, max_task_retries=RETRIES)
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
        """Keep at most `per_actor` tasks on each actor, topping up as they finish; deliver in finishing order.
        Tasks still in flight when this ends early (the driver stopped, or a task failed) are cancelled."""
        import ray

        in_flight: dict[asyncio.Future, tuple[int, object]] = {}  # task -> (index of its actor, its ObjectRef)
        held = [0] * len(self.actors)

        def submit() -> bool:
            item = next(items, None)
            if item is None:
                return False
            target = min(range(len(held)), key=held.__getitem__)
            held[target] += 1
            ref = self.actors[target].answer.remote(item)
            in_flight[asyncio.wrap_future(ref.future())] = target, ref
            return True

        try:
            while len(in_flight) < per_actor * len(self.actors) and submit():
                pass
            while in_flight:
                done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for finished in done:
                    held[in_flight.pop(finished)[0]] -= 1
                    deliver(finished.result())
                    submit()
        finally:
            for future, (_, ref) in in_flight.items():
                future.cancel()
                with contextlib.suppress(ray.exceptions.RayError, ValueError):  # it may have just finished
                    ray.cancel(ref)  # queued: never run; running: its asyncio task is cancelled on the actor

    async def _close_actors(self) -> None:
        """Close each actor's worker (bounded: a worker that does not close is killed all the same), then kill it."""
        import ray

        closing = [asyncio.wrap_future(a.close.options(concurrency_group=CONTROL).remote().future())
                   for a in self.actors]
        done, late = await asyncio.wait(closing, timeout=CLOSE_GRACE) if closing else (set(), set())
        for future in late:
            future.cancel()
        failed = [f.exception() for f in done if not f.cancelled() and f.exception() is not None]
        for a in self.actors:
            ray.kill(a, no_restart=True)
        self.actors = []
        if late or failed:
            why = f"{len(late)} did not close within {CLOSE_GRACE:.0f} s" if late else str(failed[0]).splitlines()[-1]
            print(f"--executor ray: a worker's tool server was not closed cleanly ({why}); its temporary files may "
                  "remain in the worker's temp folder", file=sys.stderr)
