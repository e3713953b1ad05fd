"""One sample's result under one visual prompt, as the explorer, `sevex show` and the result files see it.

A node's results.jsonl holds one `Outcome.to_json()` line per dev sample, and tree.json's experiment results
the shorter `summary()`; both are read back with `Outcome.from_json`. Whether a sample failed, and why, is
decided here (`failed`, `error_kind`) and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from ..failures import open_member
from ..messages import Usage


class OutcomeKind(StrEnum):
    """Why a sample has no scored answer (`ok`: it has one). The strings are the ones results.jsonl holds."""

    OK = "ok"
    # the program, in the sandbox (sandbox.py: what the child reports, and how its process ended)
    EXCEPTION = "exception"  # the program raised
    FORBIDDEN = "forbidden"  # it tried what the sandbox does not allow (a system call, its channel)
    TIMEOUT = "timeout"  # CPU or wall-clock limit
    MEMORY = "memory"
    CRASHED = "crashed"  # its process ended without a word
    CALL_LIMIT = "call_limit"  # too many tool or LVLM calls
    OVERSIZE = "oversize"  # an answer or message over its size cap
    # the sample
    INPUT = "input"  # the tool server refused the sample's image
    # reading the answer (scoring.py)
    SCORE_BUDGET = "score_budget"  # reading it took longer than its time budget
    UNSCORED = "unscored"  # the extractor failed on it
    REPLY_TOO_LONG = "reply_too_long"  # over replies.MAX_REPLY_CHARS

    @classmethod
    def _missing_(cls, value: object) -> OutcomeKind | None:
        """A kind not listed here (the agent loop's, for SketchPad: max_rounds, a backend's) stays itself."""
        return open_member(cls, value)


@dataclass
class Outcome:
    """One sample's result under one visual prompt."""

    id: str
    prediction: str | None
    answer: str | None
    correct: bool
    raw: str | None = None
    error: str | None = None
    error_kind: OutcomeKind = OutcomeKind.OK
    usage: Usage = field(default_factory=Usage)
    # PNGs of what the LVLM was shown first (all of them); saved as files for a few samples, never in JSON
    images: list[bytes] = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.error_kind = OutcomeKind(self.error_kind)  # the sandbox and the scorer name kinds as strings

    @property
    def failed(self) -> bool:
        """No answer could be read for the sample: the program, its input or the reading of its answer failed."""
        return self.error is not None or self.error_kind is not OutcomeKind.OK

    def summary(self) -> dict[str, Any]:
        """The line tree.json keeps per sample (the Analyst and the APE rewriter read it)."""
        return {"id": self.id, "prediction": self.prediction, "answer": self.answer, "correct": self.correct,
                "error": self.error, "error_kind": str(self.error_kind), "tokens": self.usage.total}

    def to_json(self) -> dict[str, Any]:
        """The line of results.jsonl: the summary plus the raw answer and the token usage."""
        return self.summary() | {"raw": self.raw, "usage": asdict(self.usage)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        """A results.jsonl line, or a tree.json summary (whose usage is only its total, so it reads as none)."""
        return cls(str(data["id"]), data.get("prediction"), data.get("answer"), bool(data.get("correct")),
                   data.get("raw"), data.get("error"), OutcomeKind(data.get("error_kind") or "ok"),
                   Usage(**data["usage"]) if data.get("usage") else Usage())
