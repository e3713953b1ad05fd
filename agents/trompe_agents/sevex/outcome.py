"""One sample's result under one visual prompt, as the explorer, `sevex show` and the result files see it.

A node's results.jsonl holds one `Outcome.to_json()` line per dev sample, and tree.json's experiment results
the shorter `summary()`; both are read back with `Outcome.from_json`. Whether a sample failed, and why, is
decided here (`failed`, `error_kind`) and nowhere else; the kinds are the agent's (`failures.ErrorKind`), which
also name how a program ended in the sandbox and why its answer could not be read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..failures import ErrorKind
from ..messages import Usage


OK = "ok"  # what results.jsonl holds as the error_kind of a sample with a scored answer


def read_kind(value: object, *, program: bool) -> ErrorKind | None:
    """The kind a SEVEX result line names (None: `ok`). Files written before `program_timeout` existed say
    `timeout` for a program over its time limit, and their agent-loop lines never say `timeout`; so on a line
    of a program (its node or prompt has code) `timeout` is `program_timeout`, and on an agent-loop line
    (SketchPad, APE) it is its backend request's `timeout`. Programs now write `program_timeout` themselves."""
    if not value or value == OK:
        return None
    kind = ErrorKind(value)
    return ErrorKind.PROGRAM_TIMEOUT if program and kind is ErrorKind.TIMEOUT else kind


@dataclass
class Outcome:
    """One sample's result under one visual prompt."""

    id: str
    prediction: str | None
    answer: str | None
    correct: bool
    raw: str | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None  # None: it has a scored answer (`ok` in the files)
    usage: Usage = field(default_factory=Usage)
    # PNGs of what the LVLM was shown first (all of them); saved as files for a few samples, never in JSON
    images: list[bytes] = field(default_factory=list, repr=False, compare=False)

    @property
    def failed(self) -> bool:
        """No answer could be read for the sample: the program, its input or the reading of its answer failed."""
        return self.error is not None or self.error_kind is not None

    @property
    def failure(self) -> ErrorKind | None:
        """Why it failed, as the illusion agent's records say it: its kind, `no_answer` when it names none."""
        return (self.error_kind or ErrorKind.NO_ANSWER) if self.failed else None

    def summary(self) -> dict[str, Any]:
        """The line tree.json keeps per sample (the Analyst and the APE rewriter read it)."""
        return {"id": self.id, "prediction": self.prediction, "answer": self.answer, "correct": self.correct,
                "error": self.error, "error_kind": str(self.error_kind or OK), "tokens": self.usage.total}

    def to_json(self) -> dict[str, Any]:
        """The line of results.jsonl: the summary plus the raw answer and the token usage."""
        return self.summary() | {"raw": self.raw, "usage": asdict(self.usage)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, program: bool) -> Outcome:
        """A results.jsonl line, or a tree.json summary (whose usage is only its total, so it reads as none);
        `program`: the line is a program's, not the agent loop's (`read_kind`)."""
        return cls(str(data["id"]), data.get("prediction"), data.get("answer"), bool(data.get("correct")),
                   data.get("raw"), data.get("error"), read_kind(data.get("error_kind"), program=program),
                   Usage(**data["usage"]) if data.get("usage") else Usage())
