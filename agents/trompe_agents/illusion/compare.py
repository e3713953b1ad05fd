"""`illusion-agent compare RUN_A RUN_B`: accuracy per category and family side by side, and the samples that flipped.

Typical use: the same dataset with and without tools (`--no-tools`), or two models. Accuracy is over answered
samples with its 95% Wilson interval; failures are counted apart, never as answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from .report import page
from .runner import read_meta, read_results
from .stats import has_answer, rate

GROUPINGS: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("all", lambda r: "all"), ("category", lambda r: r.get("category")), ("family", lambda r: r.get("family")),
    ("stimulus", lambda r: None if r.get("counterfactual") is None
     else "counterfactual" if r["counterfactual"] else "genuine")]


@dataclass
class Row:
    """One group's numbers in both runs."""

    grouping: str
    group: str
    a: tuple[int, int, int]  # right, scored, failed
    b: tuple[int, int, int]

    def cells(self) -> list[str]:
        delta = ""
        if self.a[1] and self.b[1]:
            delta = f"{(self.b[0] / self.b[1] - self.a[0] / self.a[1]) * 100:+.1f} pt"
        return [self.grouping, self.group, f"{rate(self.a[0], self.a[1])} n={self.a[1]} failed {self.a[2]}",
                f"{rate(self.b[0], self.b[1])} n={self.b[1]} failed {self.b[2]}", delta]


@dataclass
class Comparison:
    """Two runs of the same samples: grouped accuracies and the samples whose outcome changed."""

    names: tuple[str, str]
    rows: list[Row]
    flips: list[tuple[str, str, str]]  # sample id, outcome in A, outcome in B

    def text(self) -> str:
        head = ["grouping", "group", self.names[0], self.names[1], "B - A"]
        table = [head, *(row.cells() for row in self.rows)]
        widths = [max(len(line[i]) for line in table) for i in range(len(head))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table]
        lines.append(f"{len(self.flips)} samples changed outcome" + (":" if self.flips else ""))
        lines += [f"  {sample}: {a} -> {b}" for sample, a, b in self.flips]
        return "\n".join(lines)

    def html(self) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h in ("grouping", "group", *self.names, "B - A"))
        rows = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row.cells()) + "</tr>" for row in self.rows)
        flips = "".join(f"<tr><td>{escape(s)}</td><td>{escape(a)}</td><td>{escape(b)}</td></tr>"
                        for s, a, b in self.flips)
        return page("Run comparison", f"<h1>{escape(self.names[0])} vs {escape(self.names[1])}</h1>"
                    f"<p>Accuracy over answered samples [95% Wilson interval]; failures counted apart.</p>"
                    f"<table class='compare'><tr>{head}</tr>{rows}</table>"
                    f"<h2>Samples that changed outcome ({len(self.flips)})</h2>"
                    f"<table class='flips'><tr><th>sample</th><th>{escape(self.names[0])}</th>"
                    f"<th>{escape(self.names[1])}</th></tr>{flips}</table>")


def outcome(record: dict[str, Any] | None) -> str:
    """'right', 'wrong', 'answered' (no label), 'failed (kind)' or 'not run'."""
    if record is None:
        return "not run"
    if not has_answer(record):
        return f"failed ({record.get('error_kind') or 'no_answer'})"
    return {True: "right", False: "wrong"}.get(record.get("correct"), "answered")


def tally(records: list[dict[str, Any]]) -> tuple[int, int, int]:
    scored = [r for r in records if has_answer(r) and r.get("correct") is not None]
    return sum(bool(r["correct"]) for r in scored), len(scored), sum(not has_answer(r) for r in records)


def compare_runs(run_a: Path, run_b: Path) -> Comparison:
    """Compare two run folders over the samples they share (a different dataset is refused)."""
    runs = []
    for run in (Path(run_a), Path(run_b)):
        if not read_meta(run):
            raise ValueError(f"{run}: no run.json; is this a run directory?")
        runs.append(read_results(run))
    a, b = runs
    shared = [i for i in a if i in b]
    if not shared:
        raise ValueError(f"{run_a} and {run_b} share no samples; compare runs of the same dataset")
    rows = []
    for grouping, key in GROUPINGS:
        groups = sorted({key(a[i]) for i in shared} - {None}, key=str)
        for group in groups:
            ids = [i for i in shared if key(a[i]) == group]
            rows.append(Row(grouping, str(group), tally([a[i] for i in ids]), tally([b[i] for i in ids])))
    flips = [(i, outcome(a[i]), outcome(b[i])) for i in shared if outcome(a[i]) != outcome(b[i])]
    return Comparison((str(run_a), str(run_b)), rows, flips)
