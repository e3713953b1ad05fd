"""Batch runs that survive being killed: one flushed JSONL line per finished sample, reruns skip them."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from ..backends.base import Backend
from ..backends.ratelimit import RateLimited, RateLimiter
from ..datasets import answer_types
from ..datasets.base import DatasetError, Sample
from ..datasets.metrics import metric_keys
from ..messages import Usage
from ..failures import failure_kind
from ..records import SampleResult
from ..statefiles import cut_torn_tail, read_json, write_json_atomic
from ..toolclient import ToolClient
from ..trace import SAFE_NAME
from .agent import AgentConfig, IllusionAgent
from ..datasets.content import sample_digests
from .identity import (CHANGEABLE, answer_kinds, changed_samples, differences, fingerprint, legacy_fingerprint,
                       run_key, tools_offered)
from .lock import RunLock
from .pricing import PRICES, Price, cost, role_costs
from .stats import has_answer

if TYPE_CHECKING:
    from ..executors.base import Executor

STOP_AFTER = 3  # the first samples of a run failing alike with an error every later one would repeat stop it
RESULTS = "results.jsonl"
META = "run.json"
TRACES = "traces"


@dataclass
class RunOptions:
    """Where a run reads from and writes to, and how hard it pushes the backend."""

    out: Path
    concurrency: int = 4
    limit: int | None = None
    rate_limit: float | None = None  # requests per minute, per backend
    retry_errors: bool = False
    prices: dict[str, Price] = field(default_factory=lambda: dict(PRICES))
    progress: bool = True
    meta: dict[str, Any] = field(default_factory=dict)  # command, dataset, ... recorded in run.json
    settings: dict[str, Any] = field(default_factory=dict)  # backend settings that decide answers (identity.py)
    allow_change: tuple[str, ...] = ()  # fingerprint fields a resume may continue across (identity.CHANGEABLE)

    def __post_init__(self):
        unknown = sorted(set(self.allow_change) - set(CHANGEABLE))
        if unknown:
            raise ValueError(f"allow-change: {', '.join(unknown)} cannot change within a run; accepted: "
                             f"{', '.join(CHANGEABLE)}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}")
        if self.rate_limit is not None and self.rate_limit <= 0:
            raise ValueError(f"rate limit must be > 0 requests per minute, got {self.rate_limit:g}")


class RunStopped(RuntimeError):
    """The first samples all failed with the same error that no retry fixes; the message is that error."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


def read_results(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Latest record per sample id; a line cut short by a kill is ignored (it was never finished)."""
    path = Path(run_dir) / RESULTS
    records: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            records[record["id"]] = record
    return records


def repair_tail(path: Path) -> None:
    """Cut a partial last line (the process died mid-write) so the next append starts on a fresh line."""
    cut_torn_tail(path)


def is_correct(answer: str | None, label: str | None, task: int,
               kind: answer_types.AnswerType | None = None) -> bool | None:
    """None when there is no label; '1'/'0' labels count as yes/no for a yes/no item (Task I's default form),
    never for a count or another answer type whose gold is the number 1 or 0."""
    if label is None or answer is None:
        return None
    yesno = kind.kind == "yesno" if kind is not None else task == 1
    norm = {"1": "yes", "0": "no", "true": "yes", "false": "no"} if yesno else {}
    label = str(label).strip().lower().strip("()")
    return str(answer).strip().lower() == norm.get(label, label)


def trace_dir(run_dir: Path, sample_id: str) -> Path:
    return Path(run_dir) / TRACES / SAFE_NAME.sub("_", sample_id)


class Tally:
    """Running accuracy, failures, tokens and cost for the progress bar."""

    def __init__(self, records: Iterable[dict[str, Any]]):
        self.scored = self.right = self.tokens = self.failed = 0
        self.cost: float | None = 0.0
        for record in records:
            self.add(record)

    def add(self, record: dict[str, Any]) -> None:
        self.failed += not has_answer(record)
        if record.get("correct") is not None:
            self.scored += 1
            self.right += bool(record["correct"])
        tokens = Usage(**record.get("usage") or {}).total
        self.tokens += tokens
        if record.get("cost") is None and tokens:
            self.cost = None  # a model without a price: say "?" rather than a wrong sum
        elif self.cost is not None:
            self.cost += record.get("cost") or 0.0

    def postfix(self) -> dict[str, str]:
        shown = {"acc": f"{self.right / self.scored:.1%}" if self.scored else "-", "fail": str(self.failed),
                 "tok": f"{self.tokens:,}"}
        shown["cost"] = f"${self.cost:.4f}" if self.cost is not None else "?"
        return shown


async def run_samples(samples: Iterable[Sample], backend: Backend, tools: ToolClient, config: AgentConfig,
                      options: RunOptions, on_result: Callable[[dict[str, Any]], None] | None = None,
                      executor: Executor | None = None) -> dict[str, dict[str, Any]]:
    """Answer every unfinished sample with K concurrent workers (or on an executor's); returns all records.

    The folder's lock is held throughout: a second run into it fails at once (lock.py)."""
    schemas = await tools.list_tools(config.effective_tags, config.allow)  # an unknown tag or tool fails them all
    with RunLock(options.out):
        return await _run_samples(samples, backend, tools, config, options, on_result, executor,
                                  tools_offered([] if config.no_tools else schemas))


async def _run_samples(samples: Iterable[Sample], backend: Backend, tools: ToolClient, config: AgentConfig,
                       options: RunOptions, on_result: Callable[[dict[str, Any]], None] | None,
                       executor: Executor | None, offered: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The run itself, with the folder's lock held: refuse another run's folder, then answer what is left."""
    out = Path(options.out)
    samples = list(samples)
    duplicates = sorted(i for i, n in Counter(s.id for s in samples).items() if n > 1)
    if duplicates:
        raise ValueError(f"dataset: sample ids must be unique; repeated: {', '.join(duplicates[:5])}")
    order = [(s.id, (s.metadata or {}).get("index", s.id)) for s in samples]  # for submissions: every sample
    if options.limit is not None:
        samples = samples[: options.limit]
    path = out / RESULTS
    repair_tail(path)
    done = read_results(out)
    digests = sample_digests(samples)
    identity = fingerprint([s.id for s in samples], digests, task=config.task, format=options.meta.get("format"),
                           backend=backend.name, model=backend.model, settings=options.settings,
                           agent=config.describe(), tools=offered, kinds=answer_kinds(samples))
    check_resume(out, identity, order, done, digests, options.allow_change)
    stamp = {"run": run_key(identity), "trompe": identity["trompe"]}
    finished = {i for i, r in done.items() if SampleResult.from_json(r).done(options.retry_errors)}
    todo = [(position, s) for position, s in enumerate(samples) if s.id not in finished]
    write_meta(out, backend, config, options, total=len(samples), todo=len(todo), order=order, identity=identity)
    if options.rate_limit is not None:
        backend = RateLimited(backend, RateLimiter(options.rate_limit))
    agent = IllusionAgent(backend, tools, config)
    tally = Tally(r for i, r in done.items() if i in finished)
    bar = tqdm(total=len(samples), initial=len(samples) - len(todo), desc=f"task {config.task}", unit="sample",
               disable=not options.progress, file=sys.stderr, dynamic_ncols=True)
    bar.set_postfix(tally.postfix())
    queue: asyncio.Queue = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)
    first: list[dict[str, Any]] = []  # this invocation's first records, until one is answered or they agree

    with path.open("a", encoding="utf-8") as results:
        def record(entry: dict[str, Any]) -> None:
            entry = {**entry, "content": digests[entry["id"]], **stamp}  # joins match on id and content
            results.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
            results.flush()
            done[entry["id"]] = entry
            tally.add(entry)
            bar.set_postfix(tally.postfix(), refresh=False)
            bar.update(1)
            if on_result:
                on_result(entry)
            if len(first) < STOP_AFTER:
                first.append(entry)

        def stopped() -> dict[str, Any] | None:
            """The shared error when the first STOP_AFTER samples failed alike with an error that stops a run
            (ErrorKind.stops_run)."""
            kinds = {SampleResult.from_json(r).failure for r in first}
            if len(first) >= STOP_AFTER and len(kinds) == 1 and (kind := kinds.pop()) is not None and kind.stops_run:
                return first[-1]
            return None

        async def worker() -> None:
            while not queue.empty() and stopped() is None:
                position, sample = queue.get_nowait()
                record(await answer_one(agent, sample, position, out, config.task, options.prices))

        try:
            if executor is not None:
                await run_on(executor, queue, record, stopped)
            else:
                await asyncio.gather(*(worker() for _ in range(min(options.concurrency, len(todo)) or 1)))
        finally:
            bar.close()
    if (failed := stopped()) is not None and not queue.empty():
        raise RunStopped(f"stopped: the first {len(first)} samples failed with the same error: "
                         f"{first_error(failed)}", failed["error_kind"])
    return done


class _Stop(Exception):
    """Raised from the delivery callback to stop an executor once the run has failed as a whole."""


async def run_on(executor: Executor, queue: asyncio.Queue, record: Callable[[dict[str, Any]], None],
                 stopped: Callable[[], dict[str, Any] | None]) -> None:
    """Hand the queued samples to an executor; whatever it has not delivered when the run stops stays queued."""
    items = [queue.get_nowait() for _ in range(queue.qsize())]
    delivered: set[str] = set()

    def deliver(entry: dict[str, Any]) -> None:
        record(entry)
        delivered.add(entry["id"])
        if stopped() is not None:
            raise _Stop

    try:
        await executor.run(items, deliver)
    except _Stop:
        for item in items:
            if item[1].id not in delivered:
                queue.put_nowait(item)


def first_error(record: dict[str, Any]) -> str:
    """The record's first error line without the exception class and agent prefixes."""
    text = re.split(r"; (?=(?:main|rescue): )", record.get("error") or "")[0]  # errors joined per agent
    for prefix in ("main: ", "rescue: ", "BackendError: ", "QuotaExhausted: "):
        text = text.removeprefix(prefix)
    return text


async def answer_one(agent: IllusionAgent, sample: Sample, position: int, out: Path, task: int,
                     prices: dict[str, Price]) -> dict[str, Any]:
    """One result record; any failure becomes a recorded error instead of stopping the run."""
    directory = trace_dir(out, sample.id)
    shutil.rmtree(directory, ignore_errors=True)  # a sample cut off by a kill starts its trace afresh
    meta = sample.metadata or {}
    kind = answer_types.of_sample(sample)  # the item's answer form: the agent's final-answer schema follows it
    base = {"id": sample.id, "index": meta.get("index", sample.id), "position": position,
            "question": sample.question, "choices": sample.choices, "images": [str(p) for p in sample.images],
            "label": sample.answer, "category": sample.category,
            "family": meta.get("family"), "magnitude": meta.get("magnitude"),
            "counterfactual": meta.get("counterfactual"), "trace": str(directory.relative_to(out)),
            "model": agent.backend.model, "keys": metric_keys(meta),
            "answer_type": kind.describe() if kind else None,
            "service_tier": getattr(agent.backend, "service_tier", None) or "standard"}
    started = time.monotonic()
    try:
        if sample.error:  # e.g. its image is missing: this sample fails, the run goes on
            raise DatasetError(sample.error)
        outcome = await agent.answer(sample.images, sample.question, sample.choices, directory, kind)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # e.g. an unreadable image: record it, the run goes on
        return {**base, "answer": None, "reasons": "", "agent": None, "correct": None, "route": None,
                "rounds": 0, "usage": asdict(Usage()), "cost": 0.0, "roles": {}, "tool_calls": [], "refused_calls": [],
                "unknown_calls": [], "empty_replies": 0, "stops": {},
                "error": f"{type(exc).__name__}: {exc}",
                "error_kind": failure_kind(exc),
                "seconds": round(time.monotonic() - started, 3), "finished": _now()}
    return {**base, "answer": outcome.answer, "reasons": outcome.reasons, "agent": outcome.agent,
            "correct": is_correct(outcome.answer, sample.answer, task, kind), "route": outcome.route.category,
            "rounds": outcome.rounds, "usage": asdict(outcome.usage),
            "cost": cost(outcome.usage, agent.backend.model, prices),
            "roles": role_costs(outcome.roles, agent.backend.model, prices), "tool_calls": outcome.tool_calls,
            "refused_calls": outcome.refused, "unknown_calls": outcome.unknown,
            "empty_replies": outcome.empty_replies, "stops": outcome.stops,
            "error": "; ".join(outcome.errors) or None, "error_kind": outcome.error_kind,
            "seconds": round(outcome.seconds, 3), "finished": _now()}


def check_resume(out: Path, identity: dict[str, Any], order: list[tuple[str, Any]],
                 records: dict[str, dict[str, Any]], digests: dict[str, str], allow: Iterable[str]) -> None:
    """Refuse to add to a folder whose run differs from this command in anything that decides an answer.

    A folder without a single answer (every sample failed, e.g. on a mistyped model name) holds nothing to mix."""
    meta = read_meta(out)
    if not meta or not any(has_answer(r) for r in records.values()):
        return
    recorded = meta.get("fingerprint") or legacy_fingerprint(meta)
    changed = differences(recorded, identity)
    if "fingerprint" not in meta and meta.get("order") and [i for i, _ in meta["order"]] != [i for i, _ in order]:
        changed.append(("dataset", f"dataset ({meta.get('dataset')} -> another sample list)"))
    changeable = set(CHANGEABLE) if _only_limit(meta, identity, order) else set(CHANGEABLE) - {"dataset"}
    refused = [text for name, text in changed if name not in set(allow) & changeable]
    if refused:
        fields = sorted({name for name, _ in changed if name not in set(allow) & changeable})
        why = "; ".join(CHANGEABLE.get(f, "") for f in fields)
        hint = f", or pass --allow-change {','.join(fields)} to continue it ({why})" if set(fields) <= changeable \
            else ""
        raise ValueError(f"{out} holds another run: {'; '.join(refused)}; start a new folder with another "
                         f"--out{hint}")
    if altered := changed_samples(records, digests):
        raise ValueError(f"{out}: {len(altered)} answered samples have other images, question, options, answer type "
                         f"or label now ({', '.join(altered[:5])}); start a new folder with another --out")


def _only_limit(meta: dict[str, Any], identity: dict[str, Any], order: list[tuple[str, Any]]) -> bool:
    """Whether the samples used before and now are one list cut at two places (another --limit of one dataset)."""
    if "fingerprint" not in meta:
        return False
    before = [i for i, _ in meta.get("order", [])][: meta["fingerprint"]["dataset"]["samples"]]
    now = [i for i, _ in order][: identity["dataset"]["samples"]]
    shorter = min(len(before), len(now))
    return before[:shorter] == now[:shorter]


def write_meta(out: Path, backend: Backend, config: AgentConfig, options: RunOptions, total: int,
               todo: int, order: list[tuple[str, Any]], identity: dict[str, Any]) -> None:
    """run.json: what produced the results and its fingerprint; each invocation (first run or resume) is appended."""
    path = out / META
    meta = read_json(path) if path.exists() else {"created": _now()}
    invocation = {"started": _now(), "command": options.meta.get("command", sys.argv), "backend": backend.name,
                  "model": backend.model, "agent": config.describe(), "concurrency": options.concurrency,
                  "rate_limit": options.rate_limit, "samples": total, "todo": todo, "trompe": identity["trompe"],
                  "allowed_changes": [text for _, text in differences(meta.get("fingerprint") or {}, identity)]}
    meta.update({k: v for k, v in options.meta.items() if k != "command"})
    meta.update({"task": config.task, "backend": backend.name, "model": backend.model,
                 "normalize": config.normalize, "no_tools": config.no_tools, "prompts": config.prompts.hashes(),
                 "order": order, "trompe": identity["trompe"], "fingerprint": identity, "run_key": run_key(identity)})
    meta.setdefault("invocations", []).append(invocation)
    write_json_atomic(path, meta)


def read_meta(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / META
    return read_json(path) if path.exists() else {}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
