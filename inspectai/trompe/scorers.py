"""trompe's scoring as an Inspect scorer, and each benchmark's own numbers as Inspect metrics.

A sample answered by the illusion-agent solver is scored from its result record, exactly as `illusion-agent run`
scores it; any other solver's final text is read as the agent's JSON answer, else the benchmark's way
(`datasets.answers.extract`). The metrics are `datasets.metrics.benchmark_metrics` over those records, once per
harness scorer the benchmark has (`official`, and `lmms-eval` / `vlmevalkit` where they score differently).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    accuracy,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from trompe_agents.datasets.answers import extract
from trompe_agents.datasets.metrics import benchmark_metrics
from trompe_agents.datasets.scorers import OFFICIAL, check, scorers_for
from trompe_agents.final_answer import AnswerError, parse_answer
from trompe_agents.illusion.agent import answer_schema
from trompe_agents.illusion.correctness import matches_label
from trompe_agents.records import SampleResult

from .names import registered
from .samples import KEY, RECORD, answer_type, result_record


def read_answer(text: str, meta: dict[str, Any]) -> tuple[str | None, str]:
    """The answer in a solver's final text and its reasons: the agent's JSON answer, else the benchmark's cue."""
    try:
        found = parse_answer(text, answer_schema(meta["task"], meta["choices"], answer_type(meta)))
        return found["answer"], found["reasons"]  # every answer schema requires reasons
    except AnswerError:
        return extract(meta["format"], text, expected=meta["answer"], choices=meta["choices"]), ""


def record_of(state: TaskState) -> SampleResult:
    """The sample's result record: the illusion agent's own, or one made from any other solver's final text."""
    recorded = state.store.get(RECORD)
    if recorded is not None:
        return SampleResult.from_json(recorded)
    meta = state.metadata[KEY]
    text = state.output.completion
    answer, reasons = read_answer(text, meta)
    right = matches_label(answer, meta["answer"], meta["task"], answer_type(meta))  # the item's type, not the task's
    missing = answer is None
    return result_record(meta, str(state.model), answer, reasons, right, "inspect",
                         state.output.error or ("no answer in the final text" if missing else None),
                         reply=text if missing and text.strip() else None)


@metric(name=registered("benchmark"))
def benchmark(fmt: str | None = None, scorer: str = OFFICIAL) -> Metric:
    """The benchmark's headline numbers and its accuracy per category (task, subtask, family) as metrics, as the
    named harness scorer computes them; names other than `official`'s start with the scorer's name."""
    check(fmt, scorer)
    prefix = "" if scorer == OFFICIAL else f"{scorer} "

    def compute(scores: list[SampleScore]) -> Value:
        records = [SampleResult.from_json(s.score.metadata["record"]) for s in scores if s.score.metadata]
        numbers = benchmark_metrics(fmt, records, scorer)
        values = {f"{prefix}{name}": value for name, value in numbers.headline.items()
                  if name != "accuracy"}  # Inspect's own accuracy metric says it
        values.update({f"{prefix}category {name}": right for name, right, _ in numbers.groups})
        return values

    return compute


def metrics_for(fmt: str) -> list[Metric]:
    """accuracy and its stderr, and the benchmark's own numbers by each harness scorer it has."""
    return [accuracy(), stderr(), *(benchmark(fmt, name) for name in scorers_for(fmt))]


@scorer(metrics=[accuracy(), stderr()], name=registered("answer"))
def answer(fmt: str = "jsonl") -> Scorer:
    """Right or wrong as trompe scores it; unlabelled samples are kept but not scored."""

    async def score(state: TaskState, target: Target) -> Score:
        record = record_of(state)
        metadata = {"record": record.to_json()}
        if not record.labelled:
            return Score.unscored(reason="unlabelled", answer=record.answer, metadata=metadata)
        return Score(value=CORRECT if record.right else INCORRECT, answer=record.answer,
                     explanation=record.reasons or record.error, metadata=metadata)

    return score
