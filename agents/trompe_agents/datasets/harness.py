"""What every harness scorer shares: the `Score` it returns, the reply it reads, and its group arithmetic.

A scorer reads one reply per result record: the record's `reply` (raw text, e.g. imported from another harness's
output) or else the agent's answer written in the form the item's prompt asks for (each benchmark's `render`:
BlindTest "{2}", "rows={5} columns={6}", "{o}", "Yes"; BLINK "(B)"; other options "B"), so every harness reads a
trompe run as it would read a model that followed the prompt. A record without an answer (a failed sample) is a
wrong reply. Each benchmark's scorers live in its own module (blink.py, blindtest.py, ...); their docstrings name
the file and commit they follow. Headline numbers are fractions (0-1); harnesses that print percentages print 100x.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..records import SampleResult

OFFICIAL = "official"
Render = Callable[[str, str], str]  # (answer, answer_type) -> the text the item's prompt asks for


@dataclass
class Score:
    """What a scorer computes: its headline numbers, per-group accuracy (name, accuracy, items) and its source."""

    scorer: str
    rule: str
    headline: dict[str, float] = field(default_factory=dict)
    groups: list[tuple[str, float, int]] = field(default_factory=list)
    scored_ids: frozenset[str] | None = None  # the records it read, where it reads fewer than it was given


def plain(answer: str, kind: str) -> str:
    """An answer as it is (options as their letter): the default `Benchmark.render`."""
    return answer


def render(record: SampleResult, write: Render) -> str | None:
    """The agent's answer written as the item's prompt asks (`write`, the benchmark's), for a harness to read;
    yes/no answers capitalised; None without an answer."""
    if record.failed:  # no model answer (an old run's invented default included): nothing to read
        return None
    answer, kind = str(record.answer), record.answer_type or ""
    if kind == "yesno" or answer.lower() in ("yes", "no") and not kind:
        return answer.capitalize()
    return write(answer, kind)


def reply(record: SampleResult, write: Render) -> str | None:
    """The text a harness scores: the raw reply when the record holds one, else the rendered answer."""
    return record.reply if record.reply is not None else render(record, write)


def per_group(rights: dict[str, list[bool]]) -> list[tuple[str, float, int]]:
    return [(name, sum(v) / len(v), len(v)) for name, v in sorted(rights.items())]


def macro(groups: list[tuple[str, float, int]]) -> float:
    return sum(a for _, a, _ in groups) / len(groups) if groups else 0.0


def micro(groups: list[tuple[str, float, int]]) -> float:
    total = sum(k for _, _, k in groups)
    return sum(a * k for _, a, k in groups) / total if total else 0.0


def subtask(record: SampleResult) -> str:
    return record.category or "-"


def category_key(name: str) -> str:
    """'Relative Depth', 'relative_depth' and 'Relative_Depth' name the same category (a BLINK subtask, a
    BlindTest task)."""
    return re.sub(r"[\s_\-]+", "_", name.strip()).lower()


def choice_score(records: Iterable[SampleResult], write: Render, right: Callable[[str, SampleResult], bool],
                 group: Callable[[SampleResult], str] = subtask) -> list[tuple[str, float, int]]:
    """Accuracy per group of a multiple-choice benchmark: `right(reply, record)` over each record's reply."""
    rights: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        text = reply(record, write)
        rights[group(record)].append(text is not None and right(text, record))
    return per_group(rights)
