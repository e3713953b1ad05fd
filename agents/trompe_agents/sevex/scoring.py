"""Reading a program's answer without letting one answer stall the run: a size cap, and long answers read in a
child process under a time budget.

The extractors are regular expressions; some backtrack quadratically on long runs of whitespace or repeated
cues, and a regular expression holds the interpreter lock, so in this process (or a thread) it would block the
event loop, and a healthy concurrent sample would run past its wall-clock limit while it waited. Answers up
to INLINE_CHARS are read here (the worst case measured is about 0.1 s); longer ones, up to
replies.MAX_REPLY_CHARS, in `python -m trompe_agents.sevex.scoring`, killed at SCORE_BUDGET_S.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass

from ..datasets.answers import extract, normalise, same_answer
from ..failures import ErrorKind
from ..replies import ReplyTooLong, check_size

INLINE_CHARS = 2_000  # answers up to this long are read in-process
SCORE_BUDGET_S = 20.0  # wall seconds a child may take to read one long answer (its start-up included)
SCORE_BUDGET = ErrorKind.SCORE_BUDGET  # reading the answer took longer than SCORE_BUDGET_S
UNSCORED = ErrorKind.UNSCORED  # the extractor failed on the answer (the message says how)


@dataclass(frozen=True)
class Scored:
    """The extracted answer and whether it is right; `kind` and `error` say why there is none."""

    prediction: str | None
    correct: bool
    kind: ErrorKind | None = None
    error: str | None = None


def score_text(benchmark: str, raw: str, gold: str | None, choices: list[str] | None) -> tuple[str | None, bool]:
    """The answer read from `raw` with the benchmark's extractor, and whether it is the gold answer; a sample
    with options reads option letters ("(B)" is B), whatever the task."""
    prediction = extract(benchmark, raw, expected=gold, choices=choices)
    if gold is None:
        return prediction, False
    return prediction, same_answer(prediction, normalise(benchmark, gold, choices))


async def score_bounded(benchmark: str, raw: str, gold: str | None, choices: list[str] | None) -> Scored:
    """`score_text` that never raises and never blocks the event loop for long: over MAX_REPLY_CHARS is
    reply_too_long, past SCORE_BUDGET_S is score_budget, an extractor's error is unscored."""
    try:
        check_size(raw, "answer")
    except ReplyTooLong as exc:
        return Scored(None, False, exc.kind, str(exc))
    if len(raw) <= INLINE_CHARS:
        try:
            return Scored(*score_text(benchmark, raw, gold, choices))
        except Exception as exc:  # noqa: BLE001 -- one answer the extractor cannot read fails its sample only
            return Scored(None, False, UNSCORED, f"reading the answer failed: {type(exc).__name__}: {exc}")
    return await _in_child({"benchmark": benchmark, "raw": raw, "gold": gold, "choices": choices})


async def _in_child(job: dict) -> Scored:
    """Score in a fresh interpreter; killed (and reaped) when it overruns SCORE_BUDGET_S."""
    child = await asyncio.create_subprocess_exec(sys.executable, "-m", __name__, stdin=asyncio.subprocess.PIPE,
                                                 stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(SCORE_BUDGET_S):  # a cancel is never dropped (3.11's wait_for can)
            out, err = await child.communicate(json.dumps(job).encode())
    except TimeoutError:
        return Scored(None, False, SCORE_BUDGET, f"reading the {len(job['raw']):,}-character answer took over "
                      f"{SCORE_BUDGET_S:g} s (sevex.scoring.SCORE_BUDGET_S); it was not scored")
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    if child.returncode != 0:
        last = err.decode(errors="replace").strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
        return Scored(None, False, UNSCORED, f"reading the answer failed: {last[0][:300]}")
    prediction, correct = json.loads(out)
    return Scored(prediction, correct)


def main() -> None:
    """The child: one job as JSON on stdin, [prediction, correct] as JSON on stdout."""
    job = json.load(sys.stdin)
    json.dump(list(score_text(job["benchmark"], job["raw"], job["gold"], job["choices"])), sys.stdout)


if __name__ == "__main__":
    main()
