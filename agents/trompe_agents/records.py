"""One sample's result as every reader of a run sees it: whether it failed, why, and whether it was right.

A run writes one JSON object per finished sample to results.jsonl (illusion/answering.py). Resume,
`--retry-errors`, the progress bar, summaries, metrics, reports, comparisons and submissions read those lines
through `SampleResult`, so "failed" is decided here and nowhere else. Reading keeps the line as written
(older runs' lines included): `SampleResult.from_json(line).to_json() == line`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .failures import ErrorKind

# the agent an older run recorded for an answer it invented when none came: not an answer
INVENTED = "default"
TYPED = ("id", "answer", "agent", "correct", "label", "error_kind")


@dataclass(frozen=True)
class SampleResult:
    """The fields that decide a sample's fate, typed, over the whole JSON line (`fields`) as it was written."""

    id: str
    answer: str | None
    agent: str | None  # "main" or "rescue"; None when no agent answered
    correct: bool | None  # None: no label, or no answer to score
    label: str | None
    error_kind: ErrorKind | None  # why there is no answer (None: the line names no cause)
    fields: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleResult:
        kind = data.get("error_kind")
        return cls(id=str(data.get("id", "")), answer=data.get("answer"), agent=data.get("agent"),
                   correct=data.get("correct"), label=data.get("label"),
                   error_kind=ErrorKind(kind) if isinstance(kind, str) and kind else None, fields=data)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of results.jsonl: the line as read, with any typed field that was changed written back."""
        line = dict(self.fields)
        read = SampleResult.from_json(self.fields)
        for name in TYPED:
            value = getattr(self, name)
            if getattr(read, name) != value:
                line[name] = None if value is None else str(value) if name == "error_kind" else value
        return line

    @property
    def failed(self) -> bool:
        """No model answered the sample (whatever the line says about errors along the way)."""
        return self.answer is None or self.agent in (None, INVENTED)

    @property
    def failure(self) -> ErrorKind | None:
        """Why a failed sample failed (no_answer when its line names no cause); None when it was answered."""
        return (self.error_kind or ErrorKind.NO_ANSWER) if self.failed else None

    @property
    def scored(self) -> bool:
        """Answered and labelled, so it counts in accuracy over answered samples."""
        return not self.failed and self.correct is not None

    @property
    def right(self) -> bool:
        """Scored and right; a failed sample is never right."""
        return self.scored and bool(self.correct)

    def done(self, retry_errors: bool = False) -> bool:
        """Whether a rerun of the run skips this sample: not when the disk filled up under it, nor, with
        --retry-errors, when it failed."""
        if self.error_kind is not None and self.error_kind.redone_on_resume:
            return False
        return not (retry_errors and self.failed)

