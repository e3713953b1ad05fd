"""A self-contained HTML report of a run: accuracy tables, inline SVG charts, one page per sample."""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from html import escape
from pathlib import Path
from typing import Any

from ..messages import Usage
from ..trace import SAFE_NAME, read_events
from .runner import read_meta, read_results

STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}.ok{color:#17803d}.bad{color:#b3261e}.muted{color:#777}
.step{border-left:3px solid #ccc;padding:4px 12px;margin:10px 0}.step.tool{border-color:#4a7bd0}
.step.assistant{border-color:#999}.step.final{border-color:#17803d}.step.route{border-color:#c58a00}
img.chain{max-width:420px;max-height:420px;border:1px solid #ccc;margin:4px 8px 4px 0;image-rendering:pixelated}
pre{white-space:pre-wrap;background:#f8f8f8;padding:6px;margin:4px 0}code{background:#f3f3f3}"""


def tokens(record: dict[str, Any]) -> int:
    return Usage(**(record.get("usage") or {})).total


def accuracy(records: list[dict[str, Any]]) -> tuple[int, int]:
    """(right, scored) over records that have a label."""
    scored = [r for r in records if r.get("correct") is not None]
    return sum(bool(r["correct"]) for r in scored), len(scored)


def pct(right: int, total: int) -> str:
    return f"{right / total:.1%}" if total else "–"


def group_table(records: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any], title: str,
                yes_rate: bool = False) -> str:
    """Accuracy per group (and the rate of 'yes' answers, for the positive-detection bias)."""
    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        value = key(r)
        if value is not None:
            groups[value].append(r)
    if not groups:
        return ""
    head = f"<tr><th>{escape(title)}</th><th>samples</th><th>accuracy</th>" + \
        ("<th>yes-rate</th>" if yes_rate else "") + "</tr>"
    rows = []
    for value in sorted(groups, key=str):
        members = groups[value]
        right, scored = accuracy(members)
        cells = f"<td>{escape(str(value))}</td><td>{len(members)}</td><td>{pct(right, scored)}</td>"
        if yes_rate:
            yes = sum(r.get("answer") == "yes" for r in members)
            cells += f"<td>{pct(yes, len(members))}</td>"
        rows.append(f"<tr>{cells}</tr>")
    return f"<table class='group' data-group='{escape(title)}'>{head}{''.join(rows)}</table>"


def tool_fractions(records: list[dict[str, Any]]) -> dict[str, float]:
    """Fraction of samples that called each tool at least once (the paper's Figure 2)."""
    if not records:
        return {}
    used = Counter(tool for r in records for tool in set(r.get("tool_calls") or []))
    return {tool: used[tool] / len(records) for tool in sorted(used, key=lambda t: (-used[t], t))}


def bar_chart(values: dict[str, float], chart_id: str, fmt: Callable[[float], str], width: int = 640,
              top: float | None = None) -> str:
    """Horizontal bars in inline SVG, full width at `top` (default: the largest value); bars carry data attributes."""
    if not values:
        return "<p class='muted'>nothing to plot</p>"
    top = top or max(values.values()) or 1.0
    row, label_w, bar_w = 22, 170, width - 250
    parts = [f"<svg id='{chart_id}' xmlns='http://www.w3.org/2000/svg' width='{width}' "
             f"height='{row * len(values) + 8}' role='img'>"]
    for i, (label, value) in enumerate(values.items()):
        y = 4 + i * row
        w = max(1.0, bar_w * value / top)
        parts.append(f"<text x='{label_w - 6}' y='{y + 15}' text-anchor='end' font-size='12'>{escape(label)}</text>"
                     f"<rect class='bar' data-label='{escape(label)}' data-value='{value:.6g}' x='{label_w}' "
                     f"y='{y}' width='{w:.1f}' height='{row - 6}' fill='#4a7bd0'/>"
                     f"<text x='{label_w + w + 6:.1f}' y='{y + 15}' font-size='12'>{escape(fmt(value))}</text>")
    parts.append("</svg>")
    return "".join(parts)


def distribution(values: Iterable[int]) -> str:
    values = list(values)
    if not values:
        return "–"
    return f"mean {statistics.mean(values):.1f}, median {statistics.median(values):g}, max {max(values)}"


def page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>{body}</body></html>")


def sample_file(sample_id: str) -> str:
    return f"samples/{SAFE_NAME.sub('_', sample_id)}.html"


def index_page(meta: dict[str, Any], records: list[dict[str, Any]]) -> str:
    right, scored = accuracy(records)
    task = meta.get("task")
    rescued = [r for r in records if r.get("agent") in ("rescue", "default")]
    errors = [r for r in records if r.get("error_kind") == "run"]
    body = [f"<h1>Illusion agent run: Task {escape(str(task))}</h1>",
            "<table>" + "".join(f"<tr><th>{k}</th><td>{escape(str(v))}</td></tr>" for k, v in [
                ("backend / model", f"{meta.get('backend')} / {meta.get('model')}"),
                ("normalize", meta.get("normalize")), ("prompts (sha256)", json.dumps(meta.get("prompts"))),
                ("samples", len(records)), ("accuracy", f"{pct(right, scored)} ({right}/{scored} labelled)"),
                ("answered by rescue / default", f"{sum(r.get('agent') == 'rescue' for r in records)} / "
                                                 f"{sum(r.get('agent') == 'default' for r in records)}"),
                ("run errors", len(errors)),
                ("total tokens", f"{sum(tokens(r) for r in records):,}"),
                ("estimated cost", _cost(records))]) + "</table>",
            "<h2>Tool use</h2><p>Fraction of samples that called each tool at least once.</p>",
            bar_chart(tool_fractions(records), "tool-use", lambda v: f"{v:.0%}", top=1.0),
            "<h2>Accuracy</h2>",
            group_table(records, lambda r: r.get("category"), "dataset category"),
            group_table(records, lambda r: r.get("route"), "routed category"),
            group_table(records, lambda r: r.get("family"), "family", yes_rate=task == 1),
            group_table(records, lambda r: f"{r['family']} {r.get('magnitude') or 0:g}" if r.get("family") else None,
                        "family, magnitude"),
            "<h3>Genuine vs counterfactual (positive-detection bias)</h3>",
            group_table(records, _genuine, "stimulus", yes_rate=task == 1) or "<p class='muted'>no probe metadata</p>",
            "<h2>Rounds and tokens per sample</h2>",
            f"<p>rounds: {distribution(r.get('rounds') or 0 for r in records)}<br>"
            f"tokens: {distribution(tokens(r) for r in records)}</p>",
            bar_chart({str(k): v for k, v in sorted(Counter(r.get("rounds") or 0 for r in records).items())},
                      "rounds", lambda v: f"{v:g} samples"),
            "<h2>Samples that needed the rescue agent</h2>",
            _list(rescued) or "<p class='muted'>none</p>",
            "<h2>All samples</h2>", _table(records)]
    return page(f"Illusion run: task {task}", "".join(body))


def _genuine(record: dict[str, Any]) -> str | None:
    flag = record.get("counterfactual")
    return None if flag is None else ("counterfactual" if flag else "genuine")


def _cost(records: list[dict[str, Any]]) -> str:
    costs = [r.get("cost") for r in records if tokens(r)]
    return "unknown (model not in the price table)" if None in costs else f"${sum(c or 0 for c in costs):.4f}"


def _list(records: list[dict[str, Any]]) -> str:
    if not records:
        return ""
    items = "".join(f"<li><a href='{sample_file(r['id'])}'>{escape(r['id'])}</a> ({escape(str(r.get('agent')))}: "
                    f"{escape(json.dumps(r.get('stops')))})</li>" for r in records)
    return f"<ul class='rescued'>{items}</ul>"


def _table(records: list[dict[str, Any]]) -> str:
    rows = []
    for r in records:
        mark = {True: "<span class='ok'>✓</span>", False: "<span class='bad'>✗</span>"}.get(r.get("correct"), "")
        rows.append(f"<tr><td><a href='{sample_file(r['id'])}'>{escape(r['id'])}</a></td>"
                    f"<td>{escape(str(r.get('route')))}</td><td>{escape(str(r.get('answer')))}</td>"
                    f"<td>{escape(str(r.get('label')))}</td><td>{mark}</td><td>{escape(str(r.get('agent')))}</td>"
                    f"<td>{r.get('rounds')}</td><td>{tokens(r)}</td>"
                    f"<td>{escape(', '.join(r.get('tool_calls') or []))}</td></tr>")
    return ("<table class='samples'><tr><th>id</th><th>route</th><th>answer</th><th>label</th><th></th>"
            "<th>agent</th><th>rounds</th><th>tokens</th><th>tools</th></tr>" + "".join(rows) + "</table>")


def sample_page(record: dict[str, Any], run_dir: Path) -> str:
    """The question, each step of the image chain with its tool call, and the answer."""
    trace = run_dir / record.get("trace", "")
    images = f"../../{record.get('trace')}/images"
    head = [f"<p><a href='../index.html'>← run</a></p><h1>{escape(record['id'])}</h1>",
            f"<pre>{escape(record.get('question') or '')}</pre>"]
    if record.get("choices"):
        head.append("<ol type='A'>" + "".join(f"<li>{escape(c)}</li>" for c in record["choices"]) + "</ol>")
    head.append(f"<p><b>answer</b> {escape(str(record.get('answer')))} · <b>label</b> "
                f"{escape(str(record.get('label')))} · <b>answered by</b> {escape(str(record.get('agent')))}"
                + (f" · <span class='bad'>error: {escape(record['error'])}</span>" if record.get("error") else "")
                + f"</p><p>{escape(record.get('reasons') or '')}</p>")
    steps = []
    if (trace / "trace.jsonl").exists():
        calls: dict[str, dict[str, Any]] = {}
        for event in read_events(trace):
            steps.append(_step(event, images, calls))
    else:
        steps.append("<p class='muted'>no trace</p>")
    return page(record["id"], "".join(head) + "<h2>Image chain</h2>" + "".join(s for s in steps if s))


def _imgs(ids: list[str], images: str) -> str:
    return "".join(f"<figure style='display:inline-block'><img class='chain' src='{images}/"
                   f"{escape(SAFE_NAME.sub('_', i))}.png' alt='{escape(i)}'><figcaption>{escape(i)}</figcaption>"
                   f"</figure>" for i in ids)


def _step(event: dict[str, Any], images: str, calls: dict[str, dict[str, Any]]) -> str:
    kind, agent = event["event"], escape(event.get("agent", ""))
    if kind == "route":
        return (f"<div class='step route'><b>pre-router</b>: {escape(event.get('category', ''))} "
                f"(tools {escape(', '.join(event.get('tools', [])))})</div>")
    if kind == "normalize":
        return f"<div class='step route'><b>normalize</b>: <code>{escape(json.dumps(event.get('images')))}</code></div>"
    if kind == "start":
        return f"<div class='step'><b>{agent}</b> agent starts: {escape(str(event.get('model')))}</div>"
    if kind == "system":
        return (f"<details class='step'><summary>{agent}: system prompt</summary>"
                f"<pre>{escape(event['text'])}</pre></details>")
    if kind == "user":
        return (f"<div class='step'><b>{agent}: user</b><pre>{escape(event['text'])}</pre>"
                f"{_imgs(event.get('images', []), images)}</div>")
    if kind == "assistant":
        for call in event.get("tool_calls", []):
            calls[call["id"]] = call
        shown = "".join(f"<div>→ <code>{escape(c['name'])}({escape(json.dumps(c.get('arguments')))})</code></div>"
                        for c in event.get("tool_calls", []))
        text = f"<pre>{escape(event['text'])}</pre>" if event.get("text") else ""
        return f"<div class='step assistant'><b>{agent}: model</b>{text}{shown}</div>"
    if kind == "tool_result":
        call = calls.get(event.get("call_id"), {})
        args = escape(json.dumps(call.get("arguments")))
        flag = " <span class='bad'>error</span>" if event.get("is_error") else ""
        return (f"<div class='step tool' data-tool='{escape(str(event.get('name')))}'><b>{agent}: "
                f"{escape(str(event.get('name')))}</b>{flag} <code>{args}</code><pre>{escape(event['text'])}</pre>"
                f"{_imgs(event.get('images', []), images)}</div>")
    if kind == "answer":
        return (f"<div class='step'><b>{agent} stops</b>: {escape(str(event.get('stop')))} after "
                f"{event.get('rounds')} rounds <code>{escape(json.dumps(event.get('answer')))}</code></div>")
    if kind == "final":
        return f"<div class='step final'><b>final answer from {agent}</b>: {escape(str(event.get('answer')))}</div>"
    return ""


def write_report(run_dir: Path) -> Path:
    """Write report/index.html and report/samples/*.html; images are linked from the run's traces."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    if not meta:
        raise ValueError(f"{run_dir}: no run.json; is this a run directory?")
    records = sorted(read_results(run_dir).values(), key=lambda r: r.get("position", 0))
    out = run_dir / "report"
    (out / "samples").mkdir(parents=True, exist_ok=True)
    for record in records:
        (out / sample_file(record["id"])).write_text(sample_page(record, run_dir), encoding="utf-8")
    index = out / "index.html"
    index.write_text(index_page(meta, records), encoding="utf-8")
    return index
