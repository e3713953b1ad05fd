"""The progress bar's running figures: accuracy, failures, tokens and cost so far."""

from __future__ import annotations

from collections.abc import Iterable

from ..records import Counts, SampleResult


class Tally:
    """Running accuracy (records.accuracy's, over answered samples), failures, tokens and cost for the progress
    bar."""

    def __init__(self, records: Iterable[SampleResult]):
        self.counts = Counts()
        self.tokens = self.failed = 0
        self.cost: float | None = 0.0
        for record in records:
            self.add(record)

    def add(self, record: SampleResult) -> None:
        self.failed += record.failed
        self.counts.add(record)
        self.tokens += record.tokens
        if record.cost is None and record.tokens:
            self.cost = None  # a model without a price: say "?" rather than a wrong sum
        elif self.cost is not None:
            self.cost += record.cost or 0.0

    def postfix(self) -> dict[str, str]:
        over = self.counts.accuracy()
        shown = {"acc": f"{over.value:.1%}" if over.counted else "-", "fail": str(self.failed),
                 "tok": f"{self.tokens:,}"}
        shown["cost"] = f"${self.cost:.4f}" if self.cost is not None else "?"
        return shown
