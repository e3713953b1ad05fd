"""A self-contained HTML report of a run: accuracy tables, inline SVG charts, one page per sample."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from html import escape
from pathlib import Path
from typing import Any

from ..datasets.metrics import benchmark_metrics
from ..records import Policy, SampleResult, accuracy, grouped
from ..runfolder import RunFolder
from ..trace import SAFE_NAME
from ..traceview import hrefs_from, page, steps_html
from .bias import bias_section, by_family, psychometric_svg
from .export import summary, write_exports
from .identity import one_run
from .plots import bar_chart, percent, write_charts
from .pricing import role_totals
from .results import read_results
from .runmeta import read_meta
from .stats import answered, rate

PLOTS = "plots"  # report/plots/<chart>.svg and .png: each chart as files of its own


def group_table(records: list[SampleResult], key: Callable[[SampleResult], Any], title: str,
                yes_rate: bool = False) -> str:
    """Accuracy per group with its 95% interval, over answered samples; failures counted apart (and the raw rate
    of 'yes' answers, which misleads when question polarity is mixed: see the bias section)."""
    groups = grouped(records, key)
    if not groups:
        return ""
    head = f"<tr><th>{escape(title)}</th><th>samples</th><th>failed</th><th>accuracy [95% CI]</th>" + \
        ("<th>raw yes-rate</th>" if yes_rate else "") + "</tr>"
    rows = []
    for value, members in groups.items():
        found = accuracy(members)
        failed = len(members) - len(answered(members))
        cells = (f"<td>{escape(value)}</td><td>{len(members)}</td><td>{failed}</td>"
                 f"<td>{rate(found.right, found.counted)}</td>")
        if yes_rate:
            done = answered(members)
            cells += f"<td>{rate(sum(r.answer == 'yes' for r in done), len(done))}</td>"
        rows.append(f"<tr>{cells}</tr>")
    return f"<table class='group' data-group='{escape(title)}'>{head}{''.join(rows)}</table>"


def tool_fractions(records: list[SampleResult]) -> dict[str, float]:
    """Fraction of samples in which the server executed each tool at least once (the paper's Figure 2)."""
    if not records:
        return {}
    used = Counter(tool for r in records for tool in set(r.tool_calls))
    return {tool: used[tool] / len(records) for tool in sorted(used, key=lambda t: (-used[t], t))}


def distribution(values: Iterable[int]) -> str:
    values = list(values)
    if not values:
        return "–"
    return f"mean {statistics.mean(values):.1f}, median {statistics.median(values):g}, max {max(values)}"


def sample_file(sample_id: str) -> str:
    return f"samples/{SAFE_NAME.sub('_', sample_id)}.html"


def metrics_section(meta: dict[str, Any], records: list[SampleResult], variant: str) -> str:
    """The benchmark's own numbers (HallusionBench aAcc/qAcc/fAcc, per-task, per-subtask) and the rule used."""
    metrics = benchmark_metrics(meta.get("format"), records, variant)
    head = "".join(f"<tr><th>{escape(k)}</th><td>{v:.1%}</td></tr>" for k, v in metrics.headline.items())
    rows = "".join(f"<tr><td>{escape(n)}</td><td>{k}</td><td>{rate(round(a * k), k)}</td></tr>"
                   for n, a, k in metrics.groups)
    return (f"<h2>Benchmark metrics</h2><p>Scorer <b>{escape(metrics.scorer)}</b>: {escape(metrics.rule)}. "
            f"{metrics.scored} labelled samples scored "
            f"({metrics.failed} failed: the agent read no answer, so each is scored as its last reply where it "
            f"kept one, else as wrong); {metrics.unscored} unlabelled samples not scored.</p>"
            f"<table>{head}</table><table><tr><th>group</th><th>samples</th><th>accuracy [95% CI]</th></tr>{rows}"
            "</table>")


def refused_table(records: list[SampleResult]) -> str:
    """Tool calls the server did not execute: refused (bad arguments, an error result) and unknown tools."""
    refused = Counter(t for r in records for t in r.refused_calls)
    unknown = Counter(t for r in records for t in r.unknown_calls)
    if not refused and not unknown:
        return "<p class='muted'>every tool call was executed</p>"
    rows = [f"<tr data-tool='{escape(t)}'><td>{escape(t)}</td><td>{refused[t]}</td><td>{unknown[t]}</td></tr>"
            for t in sorted(set(refused) | set(unknown))]
    return ("<table class='refused'><tr><th>tool</th><th>refused calls</th><th>unknown-tool calls</th></tr>"
            + "".join(rows) + "</table>")


def index_page(meta: dict[str, Any], records: list[SampleResult], variant: str = "official") -> str:
    over, wrong = accuracy(records), accuracy(records, Policy.WRONG)
    task = meta.get("task")
    done = answered(records)
    rescued = [r for r in done if r.agent == "rescue"]
    failed = [r for r in records if r.failed]
    kinds = Counter(r.failure for r in failed)
    shown = charts(records)
    body = [f"<h1>Illusion agent run: Task {escape(str(task))}</h1>",
            "<h2>Settings</h2>", settings_table(meta),
            "<h2>Results</h2><p class='muted'>Also as <a href='summary.json'>summary.json</a> and one row per sample "
            "in <a href='samples.csv'>samples.csv</a>; each chart as an SVG and a PNG file in "
            "<a href='plots/'>plots/</a>.</p>",
            "<table class='totals'>" + "".join(f"<tr><th>{k}</th><td>{escape(str(v))}</td></tr>" for k, v in [
                ("samples", len(records)),
                ("answered by main / rescue / failed", f"{len(done) - len(rescued)} / {len(rescued)} / {len(failed)}"),
                ("failures by kind", ", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "none"),
                ("accuracy over answered [95% CI]", f"{rate(over.right, over.counted)} ({over.right} right of "
                                                    f"{over.counted} answered and labelled)"),
                ("accuracy counting failures as wrong", rate(wrong.right, wrong.counted)),
                ("total tokens", f"{sum(r.tokens for r in records):,}"),
                ("estimated cost", _cost(records))]) + "</table>",
            role_table(records),
            metrics_section(meta, records, variant),
            "<h2>Tool use</h2><p>Fraction of samples in which the server executed each tool at least once; calls "
            "it did not execute are counted below.</p>",
            shown["tool-use"], refused_table(records),
            "<h2>Accuracy</h2>",
            group_table(records, lambda r: r.category, "dataset category"),
            group_table(records, lambda r: r.route, "routed category"),
            group_table(records, lambda r: r.family, "family", yes_rate=task == 1),
            group_table(records, lambda r: f"{r.family} {r.magnitude or 0:g}" if r.family else None,
                        "family, magnitude"),
            "<h3>Genuine vs counterfactual</h3>",
            group_table(records, _genuine, "stimulus", yes_rate=task == 1) or "<p class='muted'>no probe metadata</p>",
            bias_section(records),
            "<h2>Rounds and tokens per sample</h2>",
            f"<p>rounds: {distribution(r.rounds for r in records)}<br>"
            f"tokens: {distribution(r.tokens for r in records)}</p>",
            shown["rounds"],
            "<h2>Samples that needed the rescue agent</h2>",
            _list(rescued, "rescued") or "<p class='muted'>none</p>",
            "<h2>Failed samples (no answer)</h2>",
            _list(failed, "failed") or "<p class='muted'>none</p>",
            "<h2>All samples</h2>", _table(records)]
    return page(f"Illusion run: task {task}", "".join(body))


def charts(records: list[SampleResult]) -> dict[str, str]:
    """Every chart of the report by file name: tool use, rounds, one psychometric plot per probe family."""
    shown = {"tool-use": bar_chart(tool_fractions(records), chart_id="tool-use", title="Tool use", top=1.0,
                                   x_title="samples in which the server ran the tool (%)", y_title="tool",
                                   fmt=percent),
             "rounds": bar_chart({str(k): v for k, v in sorted(Counter(r.rounds
                                                                        for r in records).items())},
                                 chart_id="rounds", title="Rounds per sample", fmt=lambda v: f"{v:g}",
                                 x_title="samples (count)", y_title="rounds (model turns)")}
    for family, split in by_family(records).items():
        shown[f"psychometric-{family}"] = psychometric_svg(family, split)
    return shown


def settings_table(meta: dict[str, Any]) -> str:
    """What produced the answers, one readable row each (from the run's fingerprint; older runs show less)."""
    fp = meta.get("fingerprint") or {}
    dataset = fp.get("dataset") or {}
    settings = fp.get("settings") or {}
    tools = fp.get("tools") or {}
    prompts = fp.get("prompts") or meta.get("prompts") or {}
    offered = ("none (the --no-tools baseline)" if meta.get("no_tools") else
               f"{len(tools['names'])}: {', '.join(tools['names'])}" if tools.get("names") else "offered")
    rows = [("trompe version", meta.get("trompe") or "not recorded (run made before versions were)"),
            ("run key", meta.get("run_key") or "–"), ("created", meta.get("created") or "–"),
            ("dataset", f"{meta.get('dataset')} ({meta.get('format') or 'format?'}"
                        + (f", split {meta['split']}" if meta.get("split") else "") + ")"),
            ("samples used", f"{dataset['samples']}, content sha256 {dataset['sha256']}" if dataset else "–"),
            ("task", f"{meta.get('task')} ({fp.get('answers') or ('yes/no' if meta.get('task') == 1 else 'A-D')})"),
            ("answer types", ", ".join(f"{kind} {n}" for kind, n in (dataset.get("answer_types") or {}).items())
             or "–"),
            ("backend / model", f"{meta.get('backend')} / {meta.get('model')}"),
            ("thinking", settings.get("thinking") or "the vendor's default"),
            ("image format sent", settings.get("image_format") or "–"),
            ("images re-sent", "every round" if settings.get("keep_images") is None and settings else
             f"the last {settings['keep_images']} rounds" if settings else "–"),
            ("fallback models", ", ".join(settings.get("fallback_models") or []) or "none"),
            ("backend options", ", ".join(f"{k}={v}" for k, v in (settings.get("options") or {}).items()) or "none"),
            ("rounds: main / rescue", f"{fp.get('max_rounds', '–')} / {fp.get('rescue_rounds', '–')}"),
            ("router / classify", f"{fp.get('router', '–')} / {fp.get('classify', '–')}"),
            ("colour normalisation", "on: near-flat colours snapped to their palette" if meta.get("normalize")
             else "off: images as given"),
            ("tools offered", offered),
            ("prompts (sha256)", "; ".join(f"{k} {str(v)[:12]}" for k, v in prompts.items()) or "–"),
            ("scorer", fp.get("scorer") or "–")]
    return ("<table class='settings'>" + "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
                                                for k, v in rows) + "</table>")


def _genuine(record: SampleResult) -> str | None:
    flag = record.counterfactual
    return None if flag is None else ("counterfactual" if flag else "genuine")


def role_table(records: list[SampleResult]) -> str:
    """Tokens and cost per role (router, main, rescue), cache reads and writes and reasoning apart; '' if none."""
    roles = role_totals(records)
    if not roles:
        return ""
    tiers = ", ".join(sorted({r.service_tier or "standard" for r in records}))
    rows = "".join(
        f"<tr><td>{escape(role)}</td><td>{t['samples']}</td><td>{t['input_tokens']:,}</td>"
        f"<td>{t['cached_tokens']:,}</td><td>{t['cache_write_tokens']:,}</td><td>{t['output_tokens']:,}</td>"
        f"<td>{t['reasoning_tokens']:,}</td><td>{_dollars(t['cost'])}</td></tr>" for role, t in roles.items())
    return (f"<h3>Cost per role</h3><p class='muted'>service tier: {escape(tiers)}; input includes the cache reads "
            "and writes</p><table class='roles'><tr><th>role</th><th>samples</th><th>input</th><th>cache read</th>"
            "<th>cache write</th><th>output</th><th>reasoning</th><th>cost</th></tr>" + rows + "</table>")


def _dollars(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _cost(records: list[SampleResult]) -> str:
    costs = [r.cost for r in records if r.tokens]
    return "unknown (model not in the price table)" if None in costs else f"${sum(c or 0 for c in costs):.4f}"


def _list(records: list[SampleResult], css: str) -> str:
    if not records:
        return ""
    items = "".join(f"<li><a href='{sample_file(r.id)}'>{escape(r.id)}</a> "
                    f"({escape(str(r.failure or r.agent))}: {escape(json.dumps(r.stops))})"
                    f"</li>" for r in records)
    return f"<ul class='{css}'>{items}</ul>"


def _table(records: list[SampleResult]) -> str:
    rows = []
    for r in records:
        mark = ("" if not r.scored else "<span class='ok'>✓</span>" if r.right else "<span class='bad'>✗</span>")
        rows.append(f"<tr><td><a href='{sample_file(r.id)}'>{escape(r.id)}</a></td>"
                    f"<td>{escape(str(r.route))}</td><td>{escape(str(r.answer))}</td>"
                    f"<td>{escape(str(r.label))}</td><td>{mark}</td><td>{escape(str(r.agent))}</td>"
                    f"<td>{escape(str(r.model))}</td>"
                    f"<td>{r.rounds}</td><td>{r.tokens}</td>"
                    f"<td>{escape(', '.join(r.tool_calls))}</td></tr>")
    return ("<table class='samples'><tr><th>id</th><th>route</th><th>answer</th><th>label</th><th></th>"
            "<th>agent</th><th>model</th><th>rounds</th><th>tokens</th><th>tools</th></tr>" + "".join(rows)
            + "</table>")


def sample_page(record: SampleResult, run_dir: Path) -> str:
    """The question, each step of the image chain with its tool call, the answer, and the model's last text
    where no answer was read from it."""
    trace = run_dir / (record.trace or "")
    head = [f"<p><a href='../index.html'>← run</a></p><h1>{escape(record.id)}</h1>",
            f"<pre>{escape(record.question or '')}</pre>"]
    if record.choices:
        head.append("<ol type='A'>" + "".join(f"<li>{escape(c)}</li>" for c in record.choices) + "</ol>")
    who = f"nobody: failed ({record.failure})" if record.failed else str(record.agent)
    head.append(f"<p><b>answer</b> {escape(str(record.answer))} · <b>label</b> "
                f"{escape(str(record.label))} · <b>answered by</b> {escape(who)}"
                f" · <b>model</b> {escape(str(record.model))} · <b>run</b> "
                f"{escape(record.run or '–')} · <b>trompe</b> {escape(record.trompe or '–')}"
                + (f" · <span class='bad'>error: {escape(record.error)}</span>" if record.error else "")
                + f"</p><p>{escape(record.reasons)}</p>")
    if record.reply is not None:
        head.append(f"<h2>The model's last reply (no answer read from it)</h2><pre class='reply'>"
                    f"{escape(record.reply)}</pre>")
    if (trace / "trace.jsonl").exists():
        steps = steps_html(trace, hrefs_from(trace, run_dir / "report" / "samples"))
    else:
        steps = "<p class='muted'>no trace</p>"
    return page(record.id, "".join(head) + "<h2>Image chain</h2>" + steps)


def write_report(run_dir: Path, variant: str = "official") -> Path:
    """Write report/index.html and report/samples/*.html; images are linked from the run's traces."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    if not meta:
        raise ValueError(f"{run_dir}: no run.json; is this a run directory?")
    records = sorted(read_results(run_dir).values(), key=lambda r: r.position)
    one_run(run_dir, records)
    out = RunFolder(run_dir) / "report"  # every folder and file of it opened without following links
    for record in records:
        out.write_atomic(sample_file(record.id), sample_page(record, run_dir))
    write_exports(out, records, summary(meta, records, variant, run_dir))
    write_charts(out / PLOTS, charts(records))
    out.write_atomic("index.html", index_page(meta, records, variant))
    return out.path / "index.html"
