"""The progress bar's running figures: accuracy, failures, tokens and cost so far."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..messages import Usage
from .stats import has_answer


class Tally:
    """Running accuracy, failures, tokens and cost for the progress bar."""

    def __init__(self, records: Iterable[dict[str, Any]]):
        self.scored = self.right = self.tokens = self.failed = 0
        self.cost: float | None = 0.0
        for record in records:
            self.add(record)

    def add(self, record: dict[str, Any]) -> None:
        self.failed += not has_answer(record)
        if record.get("correct") is not None:
            self.scored += 1
            self.right += bool(record["correct"])
        tokens = Usage(**record.get("usage") or {}).total
        self.tokens += tokens
        if record.get("cost") is None and tokens:
            self.cost = None  # a model without a price: say "?" rather than a wrong sum
        elif self.cost is not None:
            self.cost += record.get("cost") or 0.0

    def postfix(self) -> dict[str, str]:
        shown = {"acc": f"{self.right / self.scored:.1%}" if self.scored else "-", "fail": str(self.failed),
                 "tok": f"{self.tokens:,}"}
        shown["cost"] = f"${self.cost:.4f}" if self.cost is not None else "?"
        return shown
