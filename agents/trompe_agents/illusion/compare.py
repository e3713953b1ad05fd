"""`illusion-agent compare RUN_A RUN_B`: two runs over the same samples, paired: accuracy per group with the paired
difference and its interval, an exact McNemar test on the samples that flipped, a chart, and links to both traces.

Typical use: the same dataset with and without tools (`--no-tools`), or two models. Samples pair on id *and*
content (the hash of images, question, options and label each results line carries): two probe sets of different
seeds, or an edited dataset, never pair, and a mismatch is reported. Accuracy is over answered samples with its 95%
Wilson interval; failures are counted apart, never as answers.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from trompe_kernel.version import __version__

from ..records import Accuracy, SampleResult, accuracy
from ..statefiles import write_atomic
from ..trace import SAFE_NAME
from .export import GROUPINGS, HARNESS, proportion
from .identity import as_today, differences, one_run
from .lmms_samples import is_samples_log, read_samples_log
from .plots import Point, paired_bars, write_chart
from .report import page, sample_file
from .results import read_results
from .runmeta import read_meta
from .stats import mcnemar_exact, paired_difference, rate, wilson


@dataclass
class Row:
    """One group's numbers in both runs over the paired samples, and the paired table of the ones scored in both."""

    grouping: str
    group: str
    a: tuple[int, int, int]  # right, scored, failed
    b: tuple[int, int, int]
    table: tuple[int, int, int, int]  # scored in both: right in both, in A only, in B only, in neither

    def difference(self) -> tuple[float, float, float] | None:
        """B - A over the samples scored in both, with its 95% interval (stats.paired_difference)."""
        return paired_difference(*self.table) if sum(self.table) else None

    def cells(self) -> list[str]:
        delta = ""
        if (diff := self.difference()) is not None:
            delta = f"{diff[0] * 100:+.1f} pt [{diff[1] * 100:+.1f}, {diff[2] * 100:+.1f}] n={sum(self.table)}"
        return [self.grouping, self.group, f"{rate(self.a[0], self.a[1])} n={self.a[1]} failed {self.a[2]}",
                f"{rate(self.b[0], self.b[1])} n={self.b[1]} failed {self.b[2]}", delta]

    def to_json(self) -> dict[str, Any]:
        diff = self.difference()
        return {"grouping": self.grouping, "group": self.group,
                "a": {**proportion(Accuracy(*self.a[:2])), "failed": self.a[2]},
                "b": {**proportion(Accuracy(*self.b[:2])), "failed": self.b[2]},
                "paired": {"pairs": sum(self.table), "both_right": self.table[0], "a_only": self.table[1],
                           "b_only": self.table[2], "neither": self.table[3],
                           "b_minus_a": diff[0] if diff else None, "ci95": list(diff[1:]) if diff else None}}


@dataclass
class Comparison:
    """Two runs of the same samples: grouped accuracies, the paired test and the samples whose outcome changed."""

    runs: tuple[Path, Path]
    rows: list[Row]
    flips: list[tuple[str, str, str]]  # sample id, outcome in A, outcome in B
    mismatched: list[str] = field(default_factory=list)  # ids in both runs whose samples differ: not paired
    unverified: int = 0  # pairs joined on id alone (lines written before content hashes)
    settings: list[str] = field(default_factory=list)  # what differs between the runs' fingerprints
    records: tuple[dict[str, SampleResult], dict[str, SampleResult]] = ({}, {})
    metas: tuple[dict[str, Any], dict[str, Any]] = ({}, {})  # each side's run.json (or samples log's description)

    @property
    def names(self) -> tuple[str, str]:
        return str(self.runs[0]), str(self.runs[1])

    @property
    def overall(self) -> Row:
        return self.rows[0]

    def mcnemar(self) -> dict[str, Any]:
        _, a_only, b_only, _ = self.overall.table
        return {"pairs": sum(self.overall.table), "a_only": a_only, "b_only": b_only,
                "p": mcnemar_exact(a_only, b_only)}

    def notes(self) -> list[str]:
        test = self.mcnemar()
        lines = [f"exact McNemar test over {test['pairs']} samples answered in both: right in A only {test['a_only']},"
                 f" in B only {test['b_only']}, p = {test['p']:.4g}"]
        if self.settings:
            lines.append("the runs differ in: " + "; ".join(self.settings))
        if self.mismatched:
            lines.append(f"not paired: {len(self.mismatched)} ids hold other images, question, options, answer type "
                         f"or label in the two runs ({', '.join(self.mismatched[:5])})")
        if self.unverified:
            lines.append(f"{self.unverified} pairs joined on id alone (lines written before content hashes)")
        return lines

    def text(self) -> str:
        head = ["grouping", "group", self.names[0], self.names[1], "B - A [95% CI] over pairs"]
        table = [head, *(row.cells() for row in self.rows)]
        widths = [max(len(line[i]) for line in table) for i in range(len(head))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table]
        lines += self.notes()
        lines.append(f"{len(self.flips)} samples changed outcome" + (":" if self.flips else ""))
        lines += [f"  {sample}: {a} -> {b}" for sample, a, b in self.flips]
        return "\n".join(lines)

    def links(self, sample_id: str, html: Path) -> tuple[str | None, str | None]:
        """Where each run shows the sample, relative to the page: its report page, else its trace file."""
        found = []
        for run, records in zip(self.runs, self.records):
            report = run / "report" / sample_file(sample_id)
            found_trace = records[sample_id].trace if sample_id in records else None
            trace = run / (found_trace or f"traces/{SAFE_NAME.sub('_', sample_id)}")
            target = report if report.exists() else trace / "trace.jsonl"
            found.append(os.path.relpath(target, html.parent) if target.exists() else None)
        return found[0], found[1]

    def models(self) -> tuple[str, str]:
        """What the chart's legend calls each run: its model (a samples log: the folder lmms-eval names after the
        model), with "no tools" where only one run had none, and the folder where that still leaves two alike."""
        names = [str(m.get("model") or (Path(m["log"]).parent.name if m.get("log") else run.name))
                 for run, m in zip(self.runs, self.metas)]
        if bool(self.metas[0].get("no_tools")) != bool(self.metas[1].get("no_tools")):
            names = [f"{name}, {'no tools' if m.get('no_tools') else 'with tools'}"
                     for name, m in zip(names, self.metas)]
        if names[0] == names[1]:
            names = [f"{name} ({run})" for name, run in zip(names, self.runs)]
        return f"A: {names[0]}", f"B: {names[1]}"

    def mcnemar_note(self) -> str:
        """The paired test as the chart states it (the p as compare.json's, to 4 significant digits)."""
        test = self.mcnemar()
        return (f"exact McNemar test over {test['pairs']} pairs: p = {test['p']:.4g} "
                f"(right in A only {test['a_only']}, in B only {test['b_only']})")

    def chart(self) -> str:
        rows = [r for r in self.rows if r.grouping == "category"] or self.rows[:1]

        def point(tally: tuple[int, int, int]) -> Point | None:
            right, n, _ = tally
            return Point(0, right / n, *wilson(right, n), n) if n else None

        return paired_bars([(r.group, point(r.a), point(r.b)) for r in rows], self.models(),
                           chart_id="compare-categories", title="Accuracy per category",
                           x_title="accuracy over answered samples (%), whiskers: 95% Wilson interval",
                           y_title="dataset category", note=self.mcnemar_note(),
                           note_data={"p": repr(self.mcnemar()["p"])})

    def html(self, html: Path) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h in ("grouping", "group", *self.names, "B - A [95% CI]"))
        rows = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row.cells()) + "</tr>" for row in self.rows)
        flips = []
        for sample, a, b in self.flips:
            cells = [escape(sample)]
            for href, outcome in zip(self.links(sample, html), (a, b)):
                cells.append(f"<a href='{escape(href)}'>{escape(outcome)}</a>" if href else escape(outcome))
            flips.append(f"<tr data-id='{escape(sample)}'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        notes = "".join(f"<li>{escape(line)}</li>" for line in self.notes())
        return page("Run comparison", f"<h1>A: {escape(self.names[0])}<br>B: {escape(self.names[1])}</h1>"
                    f"<ul class='notes'>{notes}</ul>{self.chart()}"
                    "<p>Accuracy over answered samples [95% Wilson interval]; failures counted apart. B - A is over "
                    "the samples answered and labelled in both runs, with Newcombe's interval for paired "
                    "proportions.</p>"
                    f"<table class='compare'><tr>{head}</tr>{rows}</table>"
                    f"<h2>Samples that changed outcome ({len(self.flips)})</h2><p>Each outcome links to that run's "
                    "page for the sample (its trace when the run has no report).</p>"
                    f"<table class='flips'><tr><th>sample</th><th>A</th><th>B</th></tr>{''.join(flips)}</table>")

    def to_json(self, html: Path | None = None) -> dict[str, Any]:
        metas = self.metas
        flips = []
        for sample, a, b in self.flips:
            links = self.links(sample, html) if html else (None, None)
            flips.append({"id": sample, "a": a, "b": b, "a_link": links[0], "b_link": links[1]})
        return {"harness": {"name": HARNESS, "version": __version__},
                "runs": {k: {"folder": str(run), "model": m.get("model"), "backend": m.get("backend"),
                             "run_key": m.get("run_key"), "trompe": m.get("trompe")}
                         for k, run, m in zip(("a", "b"), self.runs, metas)},
                "differences": self.settings, "mcnemar": self.mcnemar(), "mismatched": self.mismatched,
                "unverified_pairs": self.unverified, "groups": [row.to_json() for row in self.rows], "flips": flips}


def outcome(record: SampleResult | None) -> str:
    """'right', 'wrong', 'answered' (no label), 'failed (kind)' or 'not run'."""
    if record is None:
        return "not run"
    if record.failed:
        return f"failed ({record.failure})"
    return ("right" if record.right else "wrong") if record.scored else "answered"


def tally(records: list[SampleResult]) -> tuple[int, int, int]:
    """(right, scored, failed): records.accuracy over answered samples, failures counted apart."""
    found = accuracy(records)
    return found.right, found.counted, sum(r.failed for r in records)


def paired_table(pairs: list[tuple[SampleResult, SampleResult]]) -> tuple[int, int, int, int]:
    """(right in both, A only, B only, neither) over the pairs scored in both runs."""
    both = [(a.right, b.right) for a, b in pairs if a.scored and b.scored]
    return (sum(a and b for a, b in both), sum(a and not b for a, b in both),
            sum(b and not a for a, b in both), sum(not a and not b for a, b in both))


def read_side(run: Path) -> tuple[dict[str, Any], dict[str, SampleResult]]:
    """(meta, id -> record in sample order) of a run folder, or of an lmms-eval samples log (lmms_samples.py)."""
    if is_samples_log(run):
        return read_samples_log(run)
    meta = read_meta(run)
    if not meta:
        raise ValueError(f"{run}: no run.json; is this a run directory (or an lmms-eval *_samples_*.jsonl log)?")
    records = dict(sorted(read_results(run).items(), key=lambda item: item[1].position))
    one_run(run, list(records.values()))
    return meta, records


def compare_runs(run_a: Path, run_b: Path) -> Comparison:
    """Compare two run folders (or two lmms-eval samples logs) over the samples they share by id and content
    (other samples are refused)."""
    runs, metas, results = (Path(run_a), Path(run_b)), [], []
    for run in runs:
        meta, records = read_side(run)
        metas.append(meta)
        results.append(records)
    a, b = results
    shared = [i for i in a if i in b]
    known = [i for i in shared if a[i].content and b[i].content]
    mismatched = [i for i in known if a[i].content != b[i].content]
    paired = [i for i in shared if i not in set(mismatched)]
    if not paired:
        why = (f"all {len(mismatched)} ids they share hold other images, question, options, answer type or label "
               "(e.g. probe sets of two seeds)" if mismatched else "no sample id is in both")
        raise ValueError(f"{run_a} and {run_b} share no samples: {why}; compare runs of the same dataset")
    rows = []
    for grouping, key in GROUPINGS:
        for group in sorted({key(a[i]) for i in paired} - {None}, key=str):
            ids = [i for i in paired if key(a[i]) == group]
            rows.append(Row(grouping, str(group), tally([a[i] for i in ids]), tally([b[i] for i in ids]),
                            paired_table([(a[i], b[i]) for i in ids])))
    flips = [(i, outcome(a[i]), outcome(b[i])) for i in paired if outcome(a[i]) != outcome(b[i])]
    settings = [text for _, text in differences(*(as_today(m.get("fingerprint") or {}) for m in metas))]
    return Comparison(runs, rows, flips, mismatched, len(paired) - (len(known) - len(mismatched)), settings, (a, b),
                      (metas[0], metas[1]))


def write_compare(comparison: Comparison, html: Path) -> Path:
    """The comparison page, compare.json and its chart (compare-categories.svg, .png) beside it."""
    html.parent.mkdir(parents=True, exist_ok=True)
    page_text, data = comparison.html(html), json.dumps(comparison.to_json(html), indent=2) + "\n"
    write_atomic(html, page_text)  # a failed write leaves the previous page and compare.json whole
    write_atomic(html.with_suffix(".json"), data)
    write_chart(html.parent, f"{html.stem}-categories", comparison.chart())  # the chart as .svg and .png
    return html
