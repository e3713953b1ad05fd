"""How well the regex router names the category of labelled questions: per-category accuracy and the misses.

A question line may carry a `count` (how many items of a benchmark ask it word for word), so a file of a test
set's distinct questions measures the share of the test set's items routed right."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .router import categories, route


@dataclass
class RouterReport:
    """Counts per (task, category) of a labelled question file, and every question routed elsewhere."""

    total: Counter = field(default_factory=Counter)
    correct: Counter = field(default_factory=Counter)
    misses: list[tuple[int, str, str, str, int]] = field(default_factory=list)  # task, expected, got, question, count

    @property
    def accuracy(self) -> float:
        return sum(self.correct.values()) / max(sum(self.total.values()), 1)

    def category_accuracy(self, task: int, category: str) -> float:
        return self.correct[task, category] / max(self.total[task, category], 1)

    def table(self) -> str:
        """A plain-text table a person can read in a terminal, one row per category, then the misses."""
        rows = [f"{'task':<5}{'category':<32}{'right':>6}{'of':>5}{'accuracy':>10}"]
        for task, category in sorted(self.total):
            rows.append(f"{task:<5}{category:<32}{self.correct[task, category]:>6}{self.total[task, category]:>5}"
                        f"{self.category_accuracy(task, category):>10.1%}")
        rows.append(f"{'all':<37}{sum(self.correct.values()):>6}{sum(self.total.values()):>5}"
                    f"{self.accuracy:>10.1%}")
        rows += [f"miss: task {t}, expected {want!r}, routed {got!r}: {q}" + (f" (x{n})" if n > 1 else "")
                 for t, want, got, q, n in self.misses]
        return "\n".join(rows)


def load_questions(path: Path) -> list[dict]:
    """JSON lines with task (1 or 2), category, question and an optional count (default 1); a bad line is named
    with its number."""
    if not path.is_file():
        raise ValueError(f"--questions: no such file {str(path)!r}")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            task, category, question = int(row["task"]), row["category"], row["question"]
            count = row.get("count", 1)
            if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                raise ValueError(f"count must be a whole number >= 1, got {count!r}")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"--questions: {path}:{number}: expected a JSON object with task, category and "
                             f"question ({exc})") from None
        if category not in categories(task):
            raise ValueError(f"--questions: {path}:{number}: category must be one of {', '.join(categories(task))} "
                             f"for task {task}, got {category!r}")
        rows.append({"task": task, "category": category, "question": question, "count": count})
    return rows


def evaluate(rows: list[dict]) -> RouterReport:
    """Route every question and count the hits per category, each question as many times as its count."""
    report = RouterReport()
    for row in rows:
        key, count = (row["task"], row["category"]), row.get("count", 1)
        got = route(row["question"], row["task"]).category
        report.total[key] += count
        if got == row["category"]:
            report.correct[key] += count
        else:
            report.misses.append((row["task"], row["category"], got, row["question"], count))
    return report
