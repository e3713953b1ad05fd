"""`--workers N`: N local processes, each with its own backend and in-process tool server, off the driver's GIL."""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import os
import queue
import signal
import sys
from collections.abc import Callable
from itertools import islice

from .base import ExecutorFailed, Item, Job, Record, drain, per_worker

STOP = None  # one per worker at the end of the sample queue
WINDOW = 2  # samples queued per sample a worker keeps in flight, topped up as records come back


def die_with_parent() -> None:
    """A worker must not outlive a driver killed with SIGKILL (Linux: the kernel sends it SIGKILL too)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        parent = multiprocessing.parent_process()
        if parent is not None and os.getppid() != parent.pid:  # the driver died before the signal was armed
            os._exit(1)


def worker_main(spec: Job, lanes: int, share: int, samples, results) -> None:
    """Entry point of one worker process: answer what arrives on `samples`, put records on `results`."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle; it stops the workers
    try:
        asyncio.run(_serve(spec, lanes, share, samples, results))
    except Exception as exc:
        results.put(("failed", f"{type(exc).__name__}: {exc}"))


async def _serve(spec: Job, lanes: int, share: int, samples, results) -> None:
    local: asyncio.Queue = asyncio.Queue(maxsize=lanes)

    async def feed() -> None:  # one thread at a time waits on the cross-process queue
        while (item := await asyncio.to_thread(samples.get)) is not STOP:
            await local.put(item)
        for _ in range(lanes):
            await local.put(STOP)

    async def deliver(record: Record) -> None:
        results.put(("record", record))

    async with spec.worker(share) as worker:
        await asyncio.gather(feed(), drain(local.get, worker, deliver, lanes))


class ProcessExecutor:
    """Spreads samples over worker processes; the driver receives every record and writes it alone."""

    def __init__(self, spec: Job, workers: int, concurrency: int):
        self.spec, self.workers, self.concurrency = spec, workers, concurrency

    async def run(self, todo: list[Item], deliver: Callable[[Record], None]) -> None:
        if not todo:
            return
        context = multiprocessing.get_context("spawn")  # no inherited event loop, threads or open sockets
        samples, results = context.Queue(), context.Queue()
        count = min(self.workers, len(todo))
        lanes = per_worker(self.concurrency, count)
        procs = [context.Process(target=worker_main, args=(self.spec, lanes, count, samples, results), daemon=True,
                                 name=f"trompe-worker-{i + 1}") for i in range(count)]
        for proc in procs:  # started from this (the main) thread: the parent-death signal is tied to it
            proc.start()
        items = iter(todo)  # read as they are queued: the driver holds a window of samples, not the batch
        stopped = False

        def top_up(n: int) -> None:
            """Queue the next n samples; once none is left, one STOP per worker."""
            nonlocal stopped
            for item in islice(items, n):
                samples.put(item)
                n -= 1
            if n and not stopped:
                stopped = True
                for _ in procs:
                    samples.put(STOP)

        top_up(lanes * count * WINDOW)
        remaining = len(todo)
        try:
            while remaining:
                kind, payload = await asyncio.to_thread(next_message, results, procs)
                if kind == "failed":
                    raise ExecutorFailed(f"a worker process failed ({payload}); finished samples are saved, "
                                       "rerun the same command to resume")
                deliver(payload)
                remaining -= 1
                top_up(1)
        finally:
            for proc in procs:
                if remaining:
                    proc.kill()
                proc.join(timeout=30)
            samples.close()
            results.close()


def next_message(results, procs: list) -> tuple[str, object]:
    """The next worker message; a worker that died without a word is reported instead of waited for."""
    while True:
        try:
            return results.get(timeout=1.0)
        except queue.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                return "failed", f"{dead[0].name} {ending(dead[0].exitcode)}"


def ending(exitcode: int) -> str:
    """How a worker process ended, as a person reads it: a negative exit code is the signal that killed it (the OOM
    killer sends SIGKILL)."""
    if exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with code {exitcode}"
