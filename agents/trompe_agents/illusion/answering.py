"""One sample answered into its result record: any failure becomes a recorded error, never a stopped run."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from ..datasets import answer_types
from ..datasets.base import DatasetError, Sample
from ..datasets.metrics import metric_keys
from ..failures import ErrorKind, failure_kind
from ..records import SampleResult
from ..runfolder import LinkRefused, RunFolder
from .agent import IllusionAgent
from .correctness import matches_label
from .pricing import Price, cost, role_costs
from .results import trace_name
from .runmeta import now


async def answer_one(agent: IllusionAgent, sample: Sample, position: int, out: Path, task: int,
                     prices: dict[str, Price]) -> SampleResult:
    """One result record; any failure becomes a recorded error instead of stopping the run."""
    run = RunFolder(out)
    run.remove_tree(trace_name(sample.id))  # a sample cut off by a kill starts its trace afresh
    directory = run / trace_name(sample.id)
    meta = sample.metadata or {}
    kind = answer_types.of_sample(sample)  # the item's answer form: the agent's final-answer schema follows it
    facts = SampleResult.of_sample(
        sample.id, index=meta.get("index", sample.id), position=position, question=sample.question,
        choices=sample.choices, images=[str(p) for p in sample.images], label=sample.answer,
        category=sample.category, family=meta.get("family"), magnitude=meta.get("magnitude"),
        magnitude_unit=meta.get("magnitude_unit"), counterfactual=meta.get("counterfactual"),
        trace=trace_name(sample.id), model=agent.backend.model, keys=metric_keys(meta),
        answer_type=kind.describe() if kind else None,
        service_tier=getattr(agent.backend, "service_tier", None) or "standard")
    started = time.monotonic()
    try:
        if sample.error:  # e.g. its image is missing: this sample fails, the run goes on
            raise DatasetError(sample.error)
        outcome = await agent.answer(sample.images, sample.question, sample.choices, directory, kind)
    except (asyncio.CancelledError, LinkRefused):  # a link in the run folder stops the run, not one sample
        raise
    except Exception as exc:  # e.g. an unreadable image: record it, the run goes on
        return facts.with_failure(failure_kind(exc), f"{type(exc).__name__}: {exc}", cost=0.0,
                                  seconds=round(time.monotonic() - started, 3), finished=now())
    work = {"reasons": outcome.reasons, "route": outcome.route.category, "rounds": outcome.rounds,
            "usage": outcome.usage, "cost": cost(outcome.usage, agent.backend.model, prices),
            "roles": role_costs(outcome.roles, agent.backend.model, prices), "tool_calls": outcome.tool_calls,
            "refused_calls": outcome.refused, "unknown_calls": outcome.unknown,
            "empty_replies": outcome.empty_replies, "stops": outcome.stops,
            "seconds": round(outcome.seconds, 3), "finished": now()}
    errors = "; ".join(outcome.errors) or None
    if outcome.answer is None:
        return facts.with_failure(outcome.error_kind or ErrorKind.NO_ANSWER, errors, reply=outcome.reply, **work)
    return facts.with_answer(outcome.answer, outcome.agent, matches_label(outcome.answer, sample.answer, task, kind),
                             error=errors, **work)
