"""One sample's result under one visual prompt: the run record (`records.SampleResult`) SEVEX makes, counts and
reads back, and the lines its files hold.

Every sample's record is made through `SampleResult.of_sample(...)` and `.with_answer(...)` or `.with_failure(...)`
(`sample_result`), so "failed", "right" and accuracy are the record's, as for the illusion agent. SEVEX's accuracy
is `records.accuracy` under `Policy.WRONG`: a sample no answer was read for counts as a wrong answer, as SEVEX has
always counted it. A node's results.jsonl holds one `line` per dev sample and tree.json the shorter `summary`, in
the names SEVEX's files have always used (`prediction` the answer read, `answer` the label, `raw` the program's
text); `from_line` reads either, of any version, back as the record. The kinds are the agent's
(`failures.ErrorKind`), which also name how a program ended in the sandbox and why its answer could not be read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..datasets.base import Sample
from ..failures import ErrorKind
from ..messages import Usage
from ..records import Policy, SampleResult, accuracy

OK = "ok"  # what the files hold as the error_kind of a sample with an answer
AGENT = "sevex"  # the agent a SEVEX record names for its answers
# SEVEX's names in its files -> the record's names for the same fields
RECORD_NAMES = {"prediction": "answer", "answer": "label", "raw": "reply"}


def read_kind(value: object, *, program: bool) -> ErrorKind | None:
    """The kind a SEVEX result line names (None: `ok`). Files written before `program_timeout` existed say
    `timeout` for a program over its time limit, and their agent-loop lines never say `timeout`; so on a line
    of a program (its node or prompt has code) `timeout` is `program_timeout`, and on an agent-loop line
    (SketchPad, APE) it is its backend request's `timeout`. Programs now write `program_timeout` themselves."""
    if not value or value == OK:
        return None
    kind = ErrorKind(value)
    return ErrorKind.PROGRAM_TIMEOUT if program and kind is ErrorKind.TIMEOUT else kind


def sample_result(sample: Sample, prediction: str | None, correct: bool, raw: str | None, error: str | None,
                  kind: ErrorKind | None, usage: Usage) -> SampleResult:
    """The sample's record: answered when an answer was read from the program's (or agent's) text `raw`, else
    failed for `kind` (no_answer when nothing names one); the text is kept either way."""
    facts = SampleResult.of_sample(sample.id, label=sample.answer)
    if prediction is None:
        return facts.with_failure(kind or ErrorKind.NO_ANSWER, error, reply=raw, usage=usage)
    return facts.with_answer(prediction, AGENT, correct if sample.answer is not None else None, error=error,
                             reply=raw, usage=usage)


@dataclass(frozen=True)
class Evaluated:
    """A sample's record under a visual prompt, with the PNGs of what the LVLM was shown first (all of them;
    saved as files for a few samples, never in JSON)."""

    result: SampleResult
    shown: list[bytes] = field(default_factory=list, repr=False, compare=False)


def broke(result: SampleResult) -> bool:
    """The sample failed for a named cause (the program, its input, the reading of its answer, the agent loop),
    not only because no answer could be read in the text that came back (that is a wrong answer, not a fault)."""
    return result.error is not None or result.failure not in (None, ErrorKind.NO_ANSWER)


def dev_accuracy(results: Iterable[SampleResult]) -> float:
    """Right over labelled samples, a failed one counted wrong (`records.accuracy`, Policy.WRONG); 0 for none."""
    return accuracy(results, Policy.WRONG).value or 0.0


def summary(result: SampleResult) -> dict[str, Any]:
    """The line tree.json keeps per sample (the Analyst and the APE rewriter read it)."""
    return {"id": result.id, "prediction": result.answer, "answer": result.label, "correct": result.right,
            "error": result.error, "error_kind": str(result.error_kind or OK), "tokens": result.tokens}


def line(result: SampleResult) -> dict[str, Any]:
    """The line of results.jsonl: the summary plus the raw answer and the token usage."""
    return summary(result) | {"raw": result.reply, "usage": asdict(result.usage)}


def from_line(data: Mapping[str, Any], *, program: bool) -> SampleResult:
    """A results.jsonl line or a tree.json summary (whose usage is only its total, so it reads as none), of this
    version or an older one, as its record; fields it does not name are kept in the record's `source`.
    `program`: the line is a program's, not the agent loop's (`read_kind`)."""
    renamed = {RECORD_NAMES.get(name, name): value for name, value in data.items()}
    kind = read_kind(data.get("error_kind"), program=program)
    renamed["error_kind"] = str(kind) if kind else None
    renamed["agent"] = AGENT if isinstance(renamed.get("answer"), str) else None
    return SampleResult.from_json(renamed)
