"""One sample answered into its result record: any failure becomes a recorded error, never a stopped run."""

from __future__ import annotations

import asyncio
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..datasets import answer_types
from ..datasets.base import DatasetError, Sample
from ..datasets.metrics import metric_keys
from ..failures import failure_kind
from ..messages import Usage
from .agent import IllusionAgent
from .correctness import is_correct
from .pricing import Price, cost, role_costs
from .results import trace_dir
from .runmeta import now


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
            "magnitude_unit": meta.get("magnitude_unit"),
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
                "seconds": round(time.monotonic() - started, 3), "finished": now()}
    return {**base, "answer": outcome.answer, "reasons": outcome.reasons, "agent": outcome.agent,
            "correct": is_correct(outcome.answer, sample.answer, task, kind), "route": outcome.route.category,
            "rounds": outcome.rounds, "usage": asdict(outcome.usage),
            "cost": cost(outcome.usage, agent.backend.model, prices),
            "roles": role_costs(outcome.roles, agent.backend.model, prices), "tool_calls": outcome.tool_calls,
            "refused_calls": outcome.refused, "unknown_calls": outcome.unknown,
            "empty_replies": outcome.empty_replies, "stops": outcome.stops,
            "error": "; ".join(outcome.errors) or None, "error_kind": outcome.error_kind,
            "seconds": round(outcome.seconds, 3), "finished": now()}
