"""The process executor in this process (no CLI): every sample answered once off the driver, and a worker that
dies, however it dies, stops the run in one line that says how it ended. The worker's own loop (`worker_main`)
also runs here, on plain queues, so that its lanes and its last word are checked where coverage sees them."""

from __future__ import annotations

import asyncio
import ctypes
import gc
import multiprocessing
import os
import queue
import re
import signal
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from multiprocessing import resource_tracker
from pathlib import Path

import pytest

from proctree import children
from trompe_agents.executors import create_executor, executor_names
from trompe_agents.executors.base import ExecutorFailed, per_worker
from trompe_agents.executors.processes import STOP, WINDOW, die_with_parent, ending, worker_main

PR_SET_PDEATHSIG, PR_GET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 1, 2, 36, 37  # linux/prctl.h


@dataclass
class Echo:
    """A job whose workers answer item (i, text) with (i, text, their pid); `die_at` item: `death` kills them."""

    die_at: int | None = None
    death: str = ""
    shares: list[int] = field(default_factory=list)  # the share each worker was opened with (in this process)
    hold: int = 0  # answers wait (up to 10 s) until this many are in flight at once
    in_flight: int = 0
    most: int = 0  # the most answers in flight at once (in this process)
    fd: int = -1  # a descriptor of the driver's: answers then say which file it is open on in the worker, if any

    @asynccontextmanager
    async def worker(self, share: int):
        self.shares.append(share)
        self.full = asyncio.Event()
        yield self

    async def answer(self, item):
        index, text = item
        if index == self.die_at:
            if self.death == "raise":
                raise ValueError(f"cannot answer {text}")
            if self.death == "exit":
                os._exit(1)  # what an uncaught error in a C extension's thread or sys.exit(1) leaves
            os.kill(os.getpid(), getattr(signal, self.death))
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        if self.in_flight >= self.hold:
            self.full.set()
        try:
            await asyncio.wait_for(self.full.wait(), timeout=10)
        except TimeoutError:
            pass  # fewer lanes than `hold`: `most` says how many
        await asyncio.sleep(0)
        self.in_flight -= 1
        said = {"index": index, "text": text, "pid": os.getpid()}
        if self.fd >= 0:
            said["fd"] = _file_of(self.fd)
        return said


def _file_of(opened: int | Path) -> tuple[int, int] | None:
    """The (device, inode) of a path, or of what a descriptor is open on in this process (None: not open)."""
    try:
        found = os.stat(opened)
    except OSError:
        return None
    return found.st_dev, found.st_ino


@pytest.fixture(autouse=True)
def _nothing_left():
    """Each test ends its workers and the queues' semaphore tracker itself: a later test that counts this
    process's children (the sandbox leak checks, pytest-xdist's worker included) must find none of them."""
    before = set(children(os.getpid()))
    yield
    for proc in multiprocessing.active_children():  # the executor joins its workers; one it did not is ended
        proc.kill()
        proc.join()
    gc.collect()  # the queues' semaphores are unlinked first, while the tracker still knows them
    resource_tracker._resource_tracker._stop()
    assert set(children(os.getpid())) <= before


def test_a_signal_without_a_name_is_given_by_number():
    assert ending(-9) == "was killed by SIGKILL"
    assert ending(-200) == "was killed by signal 200"
    assert ending(1) == "exited with code 1"


@pytest.mark.parametrize(("concurrency", "workers", "each"), [(4, 2, 2), (5, 2, 3), (1, 4, 1), (8, 1, 8)])
def test_workers_together_hold_the_concurrency_asked(concurrency, workers, each):
    assert per_worker(concurrency, workers) == each


@pytest.fixture
def as_a_worker():
    """worker_main arms the parent-death signal and ignores Ctrl-C: both are given back to this process after."""
    sigint = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, sigint)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, 0)


def serve(job: Echo, items: list, lanes: int, share: int = 2) -> list[tuple[str, object]]:
    """Run one worker's loop here on plain queues: `items`, then the STOP the driver sends; what it put back."""
    samples, results = queue.Queue(), queue.Queue()
    for item in [*items, STOP]:
        samples.put(item)
    worker_main(job, lanes, share, samples, results)
    return [results.get_nowait() for _ in range(results.qsize())]


def test_a_worker_answers_every_sample_in_its_lanes_until_told_to_stop(as_a_worker):
    job = Echo(hold=3)
    said = serve(job, [(i, f"s{i}") for i in range(9)], lanes=3, share=4)
    assert sorted(said, key=lambda m: m[1]["index"]) == [
        ("record", {"index": i, "text": f"s{i}", "pid": os.getpid()}) for i in range(9)]
    assert job.most == 3  # its three lanes answer at once, no more
    assert job.shares == [4]  # the job opens its worker with the share of the run it was given
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # Ctrl-C is the driver's to handle


def test_a_worker_that_raises_says_so_as_its_last_word(as_a_worker):
    said = serve(Echo(die_at=2, death="raise"), [(i, f"s{i}") for i in range(5)], lanes=1)
    assert said[-1] == ("failed", "ValueError: cannot answer s2")
    assert [m[1]["index"] for m in said[:-1]] == [0, 1]


def orphaned_worker() -> None:
    """A worker whose driver is gone before it arms the signal (it waits until it is reparented)."""
    while os.getppid() == multiprocessing.parent_process().pid:
        time.sleep(0.01)
    die_with_parent()
    os._exit(0)  # reached only if the orphan carried on


def short_lived_driver(told) -> None:
    """Start an orphaned_worker, say its pid, and exit at once without waiting for it."""
    worker = multiprocessing.get_context("fork").Process(target=orphaned_worker)
    worker.start()
    told.send(worker.pid)
    os._exit(0)


@pytest.fixture
def subreaper():
    """This process adopts the orphans below it, so that it can read how the orphaned worker ended."""
    libc, was = ctypes.CDLL(None, use_errno=True), ctypes.c_int()
    assert libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(was)) == 0
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1) == 0
    yield
    libc.prctl(PR_SET_CHILD_SUBREAPER, was.value)


def test_a_worker_is_armed_to_die_with_its_driver_and_one_whose_driver_is_gone_exits(as_a_worker, subreaper):
    die_with_parent()
    armed = ctypes.c_int()
    assert ctypes.CDLL(None, use_errno=True).prctl(PR_GET_PDEATHSIG, ctypes.byref(armed)) == 0
    assert armed.value == signal.SIGKILL
    fork = multiprocessing.get_context("fork")  # the spawned workers' code, in a child that runs this module
    alive = fork.Process(target=die_with_parent)
    alive.start()
    alive.join()
    assert alive.exitcode == 0  # its driver is there: it carries on
    hear, told = fork.Pipe(duplex=False)
    driver = fork.Process(target=short_lived_driver, args=(told,))
    driver.start()
    orphan = hear.recv()
    driver.join()
    _, status = os.waitpid(orphan, 0)  # reparented to this process, the subreaper
    assert os.waitstatus_to_exitcode(status) == 1  # it ended at once, answering nothing


def run(job: Echo, todo, workers: int = 2, concurrency: int = 3) -> list[dict]:
    delivered: list[dict] = []
    executor = create_executor("local", job, workers=workers, concurrency=concurrency)
    asyncio.run(executor.run(todo, delivered.append))
    return delivered


def test_one_worker_is_this_process_and_no_samples_start_no_worker():
    assert create_executor("local", Echo(), workers=1) is None
    assert run(Echo(), []) == []


def test_an_unknown_executor_is_refused_naming_the_ones_there_are():
    with pytest.raises(ValueError) as refused:
        create_executor("threads", Echo(), workers=2)
    said, _, names = str(refused.value).partition(" is not one of ")
    assert said == "executor: 'threads'" and sorted(names.split(", ")) == executor_names()


def test_every_sample_is_answered_once_by_a_worker_process_beyond_the_first_window():
    todo = [(i, f"s{i}") for i in range(40)]  # more than the samples queued at the start (lanes x workers x 2)
    delivered = run(Echo(), todo)
    assert sorted((r["index"], r["text"]) for r in delivered) == todo
    assert os.getpid() not in {r["pid"] for r in delivered}
    assert multiprocessing.active_children() == []  # the run is over: its workers have exited


def test_workers_start_afresh_without_the_drivers_open_files(tmp_path):
    """Workers are spawned, not forked: a forked worker would share the driver's open files and sockets (a vendor
    client's connections, the run folder's lock) and could hang on a lock another thread held at the fork."""
    path = tmp_path / "the-drivers-own"
    path.write_text("open in the driver only")
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        delivered = run(Echo(fd=fd), [(i, f"s{i}") for i in range(4)])
    finally:
        os.close(fd)
    assert len(delivered) == 4 and os.getpid() not in {r["pid"] for r in delivered}
    assert _file_of(path) not in {r["fd"] for r in delivered}


class Counted(list):
    """A todo list that counts the items an executor has taken from it so far."""

    taken = 0

    def __iter__(self):
        for item in super().__iter__():
            self.taken += 1
            yield item


def test_samples_are_queued_in_a_window_not_all_at_once():
    """Two workers of one lane each: WINDOW samples a lane queued at the start, then one more per record, so
    the driver never holds the batch (as the Ray executor's window test checks for Ray)."""
    todo = Counted((i, f"s{i}") for i in range(40))
    taken: list[int] = []
    executor = create_executor("local", Echo(), workers=2, concurrency=2)
    asyncio.run(asyncio.wait_for(executor.run(todo, lambda record: taken.append(todo.taken)), timeout=120))
    start = 2 * WINDOW
    assert taken == [min(len(todo), start + k) for k in range(len(todo))]


@pytest.mark.parametrize(("death", "said"), [
    ("SIGKILL", "was killed by SIGKILL"),  # what the OOM killer does
    ("SIGSEGV", "was killed by SIGSEGV"),
    ("exit", "exited with code 1"),
    ("raise", "ValueError: cannot answer s5"),
])
def test_a_dying_worker_stops_the_run_in_one_line_saying_how(death, said):
    todo = [(i, f"s{i}") for i in range(12)]
    delivered: list[dict] = []
    executor = create_executor("local", Echo(die_at=5, death=death), workers=2, concurrency=2)
    with pytest.raises(ExecutorFailed) as failed:
        asyncio.run(asyncio.wait_for(executor.run(todo, delivered.append), timeout=120))
    message = str(failed.value)
    assert message.startswith("a worker process failed (")
    assert said in message and message.endswith("; finished samples are saved, rerun the same command to resume")
    assert "\n" not in message
    if death != "raise":  # the worker named as `ps` shows it, numbered from 1
        assert re.search(rf"\(trompe-worker-[12] {said}\)", message)
    assert 5 not in {r["index"] for r in delivered}
