"""One sample's result, the record every part of a run writes and reads: typed, frozen, built one way per outcome.

A run writes one JSON object per finished sample to results.jsonl (`to_json`). The agent (illusion/answering.py),
the Inspect adapter and SEVEX-apply make records only through `SampleResult.of_sample(...)` followed by
`.with_answer(...)` or `.with_failure(...)`; resume, `--retry-errors`, the progress bar, summaries, metrics, reports,
exports, comparisons and submissions read `SampleResult`s, so "failed", "scored", "right" and accuracy are decided
here and nowhere else. Reading keeps the line as written (older runs' lines, fields this version does not know
and values of an unexpected type included): `SampleResult.from_json(line).to_json() == line`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from .failures import ErrorKind
from .messages import Usage

# the agent an older run recorded for an answer it invented when none came: not an answer
INVENTED = "default"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _label(value: Any) -> str | None:
    """A gold answer as text (a loader may have written 1 for a count): None, or any scalar as a string."""
    return None if value is None or isinstance(value, (dict, list)) else str(value)


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return value


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _choices(value: Any) -> list[str] | None:
    return [str(v) for v in value] if isinstance(value, list) else None


def _usage(value: Any) -> Usage:
    """The token counts as written; any other shape reads as no usage (the line keeps what it held)."""
    if not isinstance(value, dict):
        return Usage()
    known = {f.name for f in fields(Usage)}
    counts = {k: v for k, v in value.items() if k in known and (
        _count(v) is v or k == "image_tokens" and v is None or k == "long" and isinstance(v, dict))}
    try:
        return Usage(**counts)
    except TypeError:
        return Usage()


def _kind(value: Any) -> ErrorKind | None:
    return ErrorKind(value) if isinstance(value, str) and value else None


def _id(value: Any) -> str:
    return "" if value is None else str(value)


def _same(value: Any) -> Any:
    return value


class Policy(StrEnum):
    """How an accuracy treats a labelled sample no model answered."""

    EXCLUDED = "excluded"  # accuracy over answered samples: failures counted apart
    WRONG = "wrong"  # failures count as wrong answers (how lmms-eval and VLMEvalKit count an unreadable reply)


@dataclass(frozen=True)
class Accuracy:
    """Right over counted, with the policy that decided which samples count."""

    right: int
    counted: int
    policy: Policy = Policy.EXCLUDED

    @property
    def value(self) -> float | None:
        return self.right / self.counted if self.counted else None


@dataclass(frozen=True)
class SampleResult:
    """Every field a run writes for one sample, typed; `source` is the line it was read from, if any."""

    id: str
    index: Any = field(default=None, metadata={"read": _same})  # the dataset's own index (an int or a string)
    position: int = field(default=0, metadata={"read": _count})  # the sample's place in the dataset
    question: str | None = field(default=None, metadata={"read": _text})
    choices: list[str] | None = field(default=None, metadata={"read": _choices})
    images: list[str] = field(default_factory=list, metadata={"read": _names})
    label: str | None = field(default=None, metadata={"read": _label})
    category: str | None = field(default=None, metadata={"read": _text})
    family: str | None = field(default=None, metadata={"read": _text})  # probe family
    magnitude: float | None = field(default=None, metadata={"read": _number})  # probe effect size
    magnitude_unit: str | None = field(default=None, metadata={"read": _text})  # what the magnitude measures
    counterfactual: bool | None = field(default=None, metadata={"read": _flag})  # probe drawn for real
    trace: str | None = field(default=None, metadata={"read": _text})  # the trace folder, relative to the run
    model: str | None = field(default=None, metadata={"read": _text})
    keys: dict[str, Any] = field(default_factory=dict, metadata={"read": _mapping})  # metric keys (metrics.py)
    answer_type: str | None = field(default=None, metadata={"read": _text})
    service_tier: str | None = field(default=None, metadata={"read": _text})
    answer: str | None = field(default=None, metadata={"read": _text})
    reasons: str = field(default="", metadata={"read": lambda v: v if isinstance(v, str) else ""})
    # what the model wrote last when no answer was read from it (or another harness's raw output, a judge's
    # verdict, a SEVEX program's text): what the harness scorers read in place of the rendered answer
    # (datasets/harness.py `reply`). An answered agent sample keeps none: its final text is the JSON answer,
    # whose answer and reasons are the fields above (the whole text is in its trace)
    reply: str | None = field(default=None, metadata={"read": _text})
    agent: str | None = field(default=None, metadata={"read": _text})  # "main" or "rescue"; None: none answered
    correct: bool | None = field(default=None, metadata={"read": _flag})  # None: no label, or no answer
    route: str | None = field(default=None, metadata={"read": _text})
    rounds: int = field(default=0, metadata={"read": _count})
    usage: Usage = field(default_factory=Usage, metadata={"read": _usage})
    cost: float | None = field(default=None, metadata={"read": _number})  # None: the model has no price
    roles: dict[str, Any] = field(default_factory=dict, metadata={"read": _mapping})
    tool_calls: list[str] = field(default_factory=list, metadata={"read": _names})
    refused_calls: list[str] = field(default_factory=list, metadata={"read": _names})
    unknown_calls: list[str] = field(default_factory=list, metadata={"read": _names})
    empty_replies: int = field(default=0, metadata={"read": _count})
    stops: dict[str, Any] = field(default_factory=dict, metadata={"read": _mapping})
    error: str | None = field(default=None, metadata={"read": _text})
    error_kind: ErrorKind | None = field(default=None, metadata={"read": _kind})  # why there is no answer
    seconds: float | None = field(default=None, metadata={"read": _number})
    finished: str | None = field(default=None, metadata={"read": _text})
    content: str | None = field(default=None, metadata={"read": _text})  # the sample's content digest
    run: str | None = field(default=None, metadata={"read": _text})  # the run key that answered it
    trompe: str | None = field(default=None, metadata={"read": _text})  # the trompe version that answered it
    source: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------ the one way each outcome is made

    @classmethod
    def of_sample(cls, sample_id: str, **facts: Any) -> SampleResult:
        """What is known of a sample before it is answered (its question, label, metadata, where its trace goes)."""
        return cls(id=sample_id, **facts)

    def with_answer(self, answer: str, agent: str, correct: bool | None, **work: Any) -> SampleResult:
        """The sample answered by `agent`; `work` holds what answering it took (rounds, usage, cost, ...)."""
        if not isinstance(answer, str) or agent in (None, INVENTED):
            raise ValueError(f"an answered sample needs an answer and the agent that gave it, got {answer!r} "
                             f"from {agent!r}")
        return replace(self, answer=answer, agent=agent, correct=correct, error_kind=None, **work)

    def with_failure(self, kind: ErrorKind, error: str | None, **work: Any) -> SampleResult:
        """No model answered the sample, for `kind`; `work` holds what was spent (and the model's last text)."""
        return replace(self, answer=None, agent=None, correct=None, error_kind=ErrorKind(kind), error=error,
                       **work)

    # ------------------------------------------------------------ JSON

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleResult:
        """A results.jsonl line; a value of an unexpected type reads as its field's default (and is kept)."""
        values = {f.name: f.metadata["read"](data[f.name]) for f in _FIELDS if f.name in data}
        return cls(id=_id(data.get("id")), **values, source=data)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of results.jsonl: the line as read, with every field that was changed written back;
        a record made here (no source) writes every field."""
        mine = self._json()
        if self.source is None:
            return {"id": self.id, **mine}
        line = dict(self.source)
        read = SampleResult.from_json(self.source)
        if read.id != self.id:
            line["id"] = self.id
        for name, value in mine.items():
            if read._value(name) != value:
                line[name] = value
        return line

    def _json(self) -> dict[str, Any]:
        return {f.name: self._value(f.name) for f in _FIELDS}

    def _value(self, name: str) -> Any:
        value = getattr(self, name)
        if isinstance(value, Usage):
            return asdict(value)
        return str(value) if isinstance(value, ErrorKind) else value

    # ------------------------------------------------------------ what a sample's fate is

    @property
    def failed(self) -> bool:
        """No model answered the sample (whatever the line says about errors along the way)."""
        return self.answer is None or self.agent in (None, INVENTED)

    @property
    def failure(self) -> ErrorKind | None:
        """Why a failed sample failed (no_answer when its line names no cause); None when it was answered."""
        return (self.error_kind or ErrorKind.NO_ANSWER) if self.failed else None

    @property
    def labelled(self) -> bool:
        return self.label is not None

    @property
    def scored(self) -> bool:
        """Answered and labelled, so it counts in accuracy over answered samples."""
        return not self.failed and self.correct is not None

    @property
    def right(self) -> bool:
        """Scored and right; a failed sample is never right."""
        return self.scored and bool(self.correct)

    @property
    def tokens(self) -> int:
        return self.usage.total

    def done(self, retry_errors: bool = False) -> bool:
        """Whether a rerun of the run skips this sample: not when the disk filled up under it, nor, with
        --retry-errors, when it failed."""
        if self.error_kind is not None and self.error_kind.redone_on_resume:
            return False
        return not (retry_errors and self.failed)


_FIELDS = [f for f in fields(SampleResult) if "read" in f.metadata]


@dataclass
class Counts:
    """The running counts accuracy is made of, for readers that see each record once (a streamed results file)."""

    right: int = 0
    scored: int = 0  # answered and labelled
    labelled_failures: int = 0  # labelled, and no model answered

    def add(self, result: SampleResult) -> None:
        self.right += result.right
        self.scored += result.scored
        self.labelled_failures += result.labelled and result.failed

    def accuracy(self, failures: Policy | str = Policy.EXCLUDED) -> Accuracy:
        """Over answered labelled samples (`excluded`), or over every labelled sample with a failure counted
        wrong (`wrong`). Unlabelled samples never count."""
        policy = Policy(failures)
        extra = self.labelled_failures if policy is Policy.WRONG else 0
        return Accuracy(self.right, self.scored + extra, policy)


def accuracy(results: Iterable[SampleResult], failures: Policy | str = Policy.EXCLUDED) -> Accuracy:
    """The one accuracy of a set of samples (`Counts.accuracy`)."""
    counts = Counts()
    for result in results:
        counts.add(result)
    return counts.accuracy(failures)


def grouped(results: Iterable[SampleResult], key: Callable[[SampleResult], Any]) -> dict[str, list[SampleResult]]:
    """Results per group value (None: in no group), groups in sorted order of their names."""
    groups: dict[str, list[SampleResult]] = {}
    for result in results:
        value = key(result)
        if value is not None:
            groups.setdefault(str(value), []).append(result)
    return dict(sorted(groups.items()))
