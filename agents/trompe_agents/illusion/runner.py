"""Batch runs that survive being killed: K workers (or an executor's) answer what a folder does not hold yet.

Each finished sample is one whole line of results.jsonl, written by one write(2) (results.py, statefiles.py); a
rerun skips them after run.json says it is the same run (runmeta.py); the first samples failing alike with an
error every later one would repeat stop the run. A disk that refuses a write (full, over quota, failing, read-only)
stops it at once: RunFolderUnwritable, naming --out.
"""

from __future__ import annotations

import asyncio
import errno
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from ..backends.base import Backend
from ..backends.ratelimit import RateLimited, RateLimiter
from ..datasets.base import Sample
from ..datasets.content import Cache, sample_digest
from ..failures import DISK_KINDS, WRITE_ERRNOS
from ..records import SampleResult
from ..runfolder import RunFolder
from ..toolclient import ToolClient
from .agent import AgentConfig, IllusionAgent
from .answering import answer_one
from .identity import answer_kind, changed_sample, fingerprint, run_key, tools_offered
from .lock import RunLock
from .results import RESULTS, FolderResults, first_error, latest_results, repair_tail
from .runmeta import check_resume, write_meta
from .runoptions import RunOptions
from .tally import Tally

if TYPE_CHECKING:
    from ..executors.base import Executor

STOP_AFTER = 3  # the first samples of a run failing alike with an error every later one would repeat stop it


class RunStopped(RuntimeError):
    """The first samples all failed with the same error that no retry fixes; the message is that error."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


class RunFolderUnwritable(OSError):
    """The run folder's disk refused a write: the run stops, what is finished is kept, a rerun resumes."""

    def __init__(self, out: Path, code: int, what: str):
        super().__init__(code, what)
        self.message = (f"--out {out}: {what}; the finished samples are kept: free space or fix the disk, then "
                        "rerun the same command to resume")

    def __str__(self) -> str:
        return self.message


async def run_samples(samples: Iterable[Sample], backend: Backend, tools: ToolClient, config: AgentConfig,
                      options: RunOptions, on_result: Callable[[SampleResult], None] | None = None,
                      executor: Executor | None = None) -> FolderResults:
    """Answer every unfinished sample with K concurrent workers (or on an executor's); returns the folder's
    records (read from results.jsonl when asked: the run itself keeps none).

    The folder's lock is held throughout: a second run into it fails at once (lock.py)."""
    schemas = await tools.list_tools(config.effective_tags, config.allow)  # an unknown tag or tool fails them all
    try:
        with RunLock(options.out):
            return await _run_samples(samples, backend, tools, config, options, on_result, executor,
                                      tools_offered([] if config.no_tools else schemas))
    except OSError as exc:
        if isinstance(exc, RunFolderUnwritable) or exc.errno not in WRITE_ERRNOS:
            raise
        raise RunFolderUnwritable(options.out, exc.errno, str(exc)) from None


async def _run_samples(samples: Iterable[Sample], backend: Backend, tools: ToolClient, config: AgentConfig,
                       options: RunOptions, on_result: Callable[[SampleResult], None] | None,
                       executor: Executor | None, offered: dict[str, Any]) -> FolderResults:
    """The run itself, with the folder's lock held: refuse another run's folder, then answer what is left.

    The samples are read twice (a re-iterable dataset is never held whole: a one-shot iterator is listed first),
    once for the run's identity and once as they are handed out; records go to results.jsonl and are not kept."""
    out = Path(options.out)
    if iter(samples) is samples:
        samples = list(samples)
    listing = read_listing(samples, options.limit)
    path = out / RESULTS
    repair_tail(path)
    digests = listing.digests
    identity = fingerprint(list(digests), digests, task=config.task, format=options.meta.get("format"),
                           backend=backend.name, model=backend.model, settings=options.settings,
                           agent=config.describe(), tools=offered, kinds=dict(sorted(listing.kinds.items())))
    tally = Tally(())
    finished: set[str] = set()
    answered, altered = False, []
    for result in latest_results(out):  # one streaming pass: the folder's records are never all in memory
        answered = answered or not result.failed
        if changed_sample(result, digests):
            altered.append(result.id)
        if result.done(options.retry_errors):
            finished.add(result.id)
            tally.add(result)
    identity = check_resume(out, identity, listing.order, answered, altered, options.allow_change)
    stamp = {"run": run_key(identity), "trompe": identity["trompe"]}
    todo = Todo(samples, options.limit, finished, sum(i not in finished for i in digests))
    write_meta(out, backend, config, options, total=len(digests), todo=len(todo), order=listing.order,
               identity=identity)
    if not todo:  # a rerun of a finished run: said, so the summary below is not taken for new work
        print(f"nothing left to do: all {len(digests)} samples are in {path}"
              f"{'' if options.retry_errors else ' (--retry-errors redoes those without an answer)'}", file=sys.stderr)
    if options.rate_limit is not None:
        backend = RateLimited(backend, RateLimiter(options.rate_limit))
    agent = IllusionAgent(backend, tools, config)
    bar = tqdm(total=len(digests), initial=len(digests) - len(todo), desc=f"task {config.task}", unit="sample",
               disable=not options.progress, file=sys.stderr, dynamic_ncols=True)
    bar.set_postfix(tally.postfix())
    first: list[SampleResult] = []  # this invocation's first records, until one is answered or they agree
    delivered = 0

    with RunFolder(out).log(RESULTS) as results:  # whole lines, never through a link (runfolder.py)
        def record(entry: SampleResult) -> None:
            nonlocal delivered
            entry = replace(entry, content=digests[entry.id], **stamp)  # joins match on id and content
            line = json.dumps(entry.to_json(), ensure_ascii=False, default=str) + "\n"
            if entry.error_kind in DISK_KINDS:  # its trace could not be written: nor will the next one's
                code = errno.EIO if entry.error_kind == "disk_error" else errno.ENOSPC
                what = f"sample {entry.id!r} could not be written ({first_error(entry.error)})"
                try:  # a failing disk turns read-only after its first error: that one is the cause to name
                    results.append(line)
                except OSError as exc:
                    what += f", nor its record ({exc.strerror})"
                raise RunFolderUnwritable(out, code, what)
            results.append(line)
            delivered += 1
            tally.add(entry)
            bar.set_postfix(tally.postfix(), refresh=False)
            bar.update(1)
            if on_result:
                on_result(entry)
            if len(first) < STOP_AFTER:
                first.append(entry)

        def stopped() -> SampleResult | None:
            """The shared error when the first STOP_AFTER samples failed alike with an error that stops a run
            (ErrorKind.stops_run)."""
            kinds = {r.failure for r in first}
            if len(first) >= STOP_AFTER and len(kinds) == 1 and (kind := kinds.pop()) is not None and kind.stops_run:
                return first[-1]
            return None

        pending = iter(todo)

        async def worker() -> None:
            while stopped() is None and (item := next(pending, None)) is not None:
                position, sample = item
                record(await answer_one(agent, sample, position, out, config.task, options.prices))

        try:
            if executor is not None:
                await run_on(executor, todo, record, stopped)
            else:
                await all_or_none([worker() for _ in range(min(options.concurrency, len(todo)) or 1)])
        finally:
            bar.close()
    if (failed := stopped()) is not None and delivered < len(todo):
        raise RunStopped(f"stopped: the first {len(first)} samples failed with the same error: "
                         f"{first_error(failed.error)}", failed.error_kind)
    return FolderResults(out, path.stat().st_size)  # the folder as this run left it


async def all_or_none(coroutines: list) -> None:
    """Run the workers together; the first to fail cancels the others (their vendor calls with them), so the
    run ends with its error at once rather than when the last of them runs dry."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass
class Listing:
    """What a run keeps of its dataset: per sample only its id, index and content hash, never the sample."""

    order: list[tuple[str, Any]]  # (id, index) of every sample, for submissions
    digests: dict[str, str]  # id -> content hash of the samples run (the first --limit), in dataset order
    kinds: Counter  # answer forms of the samples run (identity.answer_kind), counted


def read_listing(samples: Iterable[Sample], limit: int | None) -> Listing:
    """One pass over the samples: refuse repeated ids, and note each sample's id, index and content hash."""
    seen: set[str] = set()
    repeated: set[str] = set()
    listing = Listing([], {}, Counter())
    cache: Cache = {}
    for n, sample in enumerate(samples):
        if sample.id in seen:
            repeated.add(sample.id)
        seen.add(sample.id)
        listing.order.append((sample.id, (sample.metadata or {}).get("index", sample.id)))
        if limit is None or n < limit:
            listing.digests[sample.id] = sample_digest(sample, cache)
            listing.kinds[answer_kind(sample)] += 1
    if repeated:
        raise ValueError(f"dataset: sample ids must be unique; repeated: {', '.join(sorted(repeated)[:5])}")
    return listing


class Todo:
    """The unfinished samples with their positions, read afresh from the dataset when iterated: a count is held."""

    def __init__(self, samples: Iterable[Sample], limit: int | None, finished: set[str], count: int):
        self.samples, self.limit, self.finished, self.count = samples, limit, finished, count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[tuple[int, Sample]]:
        for position, sample in enumerate(islice(self.samples, self.limit)):
            if sample.id not in self.finished:
                yield position, sample


class _Stop(Exception):
    """Raised from the delivery callback to stop an executor once the run has failed as a whole."""


async def run_on(executor: Executor, todo: Todo, record: Callable[[SampleResult], None],
                 stopped: Callable[[], SampleResult | None]) -> None:
    """Hand the unfinished samples to an executor, which reads them as it submits; stop it once the run has
    failed as a whole (what it has not delivered then stays unanswered)."""

    def deliver(entry: SampleResult) -> None:
        record(entry)
        if stopped() is not None:
            raise _Stop

    try:
        await executor.run(todo, deliver)  # type: ignore[arg-type]  # sized and iterable, as executors use it
    except _Stop:
        pass
