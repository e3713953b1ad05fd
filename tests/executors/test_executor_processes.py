"""The process executor in this process (no CLI): every sample answered once off the driver, and a worker that
dies, however it dies, stops the run in one line that says how it ended."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
from contextlib import asynccontextmanager
from dataclasses import dataclass
from multiprocessing import resource_tracker

import pytest

from trompe_agents.executors import create_executor
from trompe_agents.executors.base import ExecutorFailed, per_worker
from trompe_agents.executors.processes import ending


@dataclass
class Echo:
    """A job whose workers answer item (i, text) with (i, text, their pid); `die_at` item: `death` kills them."""

    die_at: int | None = None
    death: str = ""

    @asynccontextmanager
    async def worker(self, share: int):
        yield self

    async def answer(self, item):
        index, text = item
        if index == self.die_at:
            if self.death == "raise":
                raise ValueError(f"cannot answer {text}")
            if self.death == "exit":
                os._exit(3)
            os.kill(os.getpid(), getattr(signal, self.death))
        await asyncio.sleep(0)
        return {"index": index, "text": text, "pid": os.getpid()}


@pytest.fixture(autouse=True, scope="module")
def _tracker_stopped():
    """The workers' queues start this process's semaphore tracker; it would outlive the test."""
    yield
    gc.collect()  # the queues' semaphores are unlinked first, while the tracker still knows them
    resource_tracker._resource_tracker._stop()


def run(job: Echo, todo, workers: int = 2, concurrency: int = 3) -> list[dict]:
    delivered: list[dict] = []
    executor = create_executor("local", job, workers=workers, concurrency=concurrency)
    asyncio.run(executor.run(todo, delivered.append))
    return delivered


def test_every_sample_is_answered_once_by_a_worker_process_beyond_the_first_window():
    todo = [(i, f"s{i}") for i in range(40)]  # more than the samples queued at the start (lanes x workers x 2)
    delivered = run(Echo(), todo)
    assert sorted((r["index"], r["text"]) for r in delivered) == todo
    assert os.getpid() not in {r["pid"] for r in delivered}


def test_one_worker_is_this_process_and_no_samples_start_no_worker():
    assert create_executor("local", Echo(), workers=1) is None
    assert run(Echo(), []) == []


@pytest.mark.parametrize(("death", "said"), [
    ("SIGKILL", "was killed by SIGKILL"),  # what the OOM killer does
    ("SIGSEGV", "was killed by SIGSEGV"),
    ("exit", "exited with code 3"),
    ("raise", "ValueError: cannot answer s5"),
])
def test_a_dying_worker_stops_the_run_in_one_line_saying_how(death, said):
    todo = [(i, f"s{i}") for i in range(12)]
    delivered: list[dict] = []
    executor = create_executor("local", Echo(die_at=5, death=death), workers=2, concurrency=2)
    with pytest.raises(ExecutorFailed) as failed:
        asyncio.run(asyncio.wait_for(executor.run(todo, delivered.append), timeout=120))
    message = str(failed.value)
    assert said in message and "rerun the same command to resume" in message
    assert "\n" not in message
    if death != "raise":
        assert "trompe-worker-" in message
    assert 5 not in {r["index"] for r in delivered}


def test_a_signal_without_a_name_is_given_by_number():
    assert ending(-9) == "was killed by SIGKILL"
    assert ending(-200) == "was killed by signal 200"
    assert ending(1) == "exited with code 1"


@pytest.mark.parametrize(("concurrency", "workers", "each"), [(4, 2, 2), (5, 2, 3), (1, 4, 1), (8, 1, 8)])
def test_workers_together_hold_the_concurrency_asked(concurrency, workers, each):
    assert per_worker(concurrency, workers) == each
