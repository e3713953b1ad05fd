"""`sevex show`: the tree as HTML (ideas, rewards, insights, example images) and the best-accuracy plot."""

from __future__ import annotations

import base64
import html
import json
from collections import Counter
from pathlib import Path

from ..backends.catalogue import DEFAULTS
from ..costs import Price, cost, parse_prices
from ..messages import Usage
from .outcome import broke
from .roles import Costs
from .tree import Node, Tree


def render(run_dir: Path, others: list[Path] | None = None) -> str:
    """The run's page; `others` (runs of the same task) add their mean best-accuracy curve, as in Figure 5."""
    tree = Tree.from_json(json.loads((run_dir / "tree.json").read_text()))
    state = json.loads((run_dir / "state.json").read_text())
    run = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").exists() else {}
    best = tree.best()
    tokens = Costs.from_json(state["costs"]).exploration_total()
    unusable = [h for h in state["history"] if h.get("unusable")]
    body = [f"<h1>SEVEX run: {html.escape(str(run.get('task', run_dir.name)))}</h1>",
            f"<p>Strategy {html.escape(str(run.get('strategy', '?')))}; {len(tree.executed())} executed of "
            f"{len(tree.nodes)} nodes; best dev accuracy <b>{best.reward:.3f}</b> (node {best.id}); "
            f"exploration tokens {tokens:,}; <span class=unusable-count>{len(unusable)} unusable "
            f"iteration(s)</span>.</p>",
            *([f"<p><b>Stopped:</b> {html.escape(state['stopped'])}</p>"] if state.get("stopped") else []),
            "<h2>Best dev accuracy over iterations</h2>", accuracy_plot(state["history"]),
            *(_mean_section([state["history"], *(_history(o) for o in others)]) if others else []),
            *(["<h2>Unusable iterations</h2><ul>" + "".join(
                f"<li>iteration {h['iteration']}: {html.escape(h['unusable'])}</li>" for h in unusable) + "</ul>"]
              if unusable else []),
            "<h2>NUCT selections</h2>", selections_view(state.get("selections", []), tree, run),
            "<h2>Tokens and cost per role</h2>", _cost_table(state["costs"]["by_role"], "role", run),
            "<h2>Tokens per stage</h2>", _cost_table(state["costs"]["by_stage"], "stage"),
            "<h2>Idea tree</h2>", _subtree(tree, tree.root, best.id)]
    return ("<!doctype html><meta charset=utf-8><title>SEVEX run</title><style>"
            "body{font-family:sans-serif;max-width:1100px;margin:2em auto}details{margin-left:1.2em;"
            "border-left:2px solid #ddd;padding-left:.6em}summary{cursor:pointer}.best{background:#fff3c4}"
            ".pending{color:#888}img{max-height:160px;margin:4px;border:1px solid #ccc}pre{background:#f6f6f6;"
            "padding:.5em;overflow:auto}table{border-collapse:collapse}.chosen{background:#e4f4e4}"
            "td,th{border:1px solid #ccc;padding:2px 8px}"
            "</style>" + "\n".join(body))


def accuracy_plot(history: list[dict], width: int = 640, height: int = 240) -> str:
    """Inline SVG of the best dev accuracy after each iteration (a step line) with each node's reward."""
    if not history:
        return "<p>(no iterations yet)</p>"
    last = max(h["iteration"] for h in history) or 1
    pad = 36

    def xy(it: float, acc: float) -> tuple[float, float]:
        return pad + (width - 2 * pad) * it / last, height - pad - (height - 2 * pad) * acc

    steps = " ".join("{:.1f},{:.1f}".format(*xy(h["iteration"], h["best"])) for h in history)
    dots = "".join('<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="#888"><title>node {}: {:.3f}</title></circle>'
                   .format(*xy(h["iteration"], h["reward"]), h["node"], h["reward"]) for h in history
                   if h["node"] is not None)
    ticks = "".join(f'<text x="{pad - 4}" y="{xy(0, a)[1] + 3:.1f}" font-size="10" text-anchor="end">{a:g}</text>'
                    for a in (0, 0.25, 0.5, 0.75, 1.0))  # :g, not :.1f, which printed 0.25 as 0.2
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" class="plot">'
            f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#000"/>'
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#000"/>{ticks}'
            f'<text x="{width / 2}" y="{height - 6}" font-size="11" text-anchor="middle">iteration (0..{last})</text>'
            f'<text x="7" y="{height / 2}" font-size="10" text-anchor="middle" '
            f'transform="rotate(-90 7 {height / 2})">dev accuracy (0-1)</text>'
            f'<polyline class="best-line" fill="none" stroke="#c60" stroke-width="2" points="{steps}"/>{dots}</svg>')


def _history(run_dir: Path) -> list[dict]:
    state = run_dir / "state.json"
    if not state.exists():
        raise FileNotFoundError(f"--with: {run_dir} holds no run (state.json missing)")
    return json.loads(state.read_text())["history"]


def mean_curve(histories: list[list[dict]]) -> list[dict]:
    """Best dev accuracy after each iteration averaged over runs, up to the shortest run (a step line)."""
    last = min(max(h["iteration"] for h in history) for history in histories)
    curves = []
    for history in histories:
        best = {h["iteration"]: h["best"] for h in history}
        curves.append([best[i] if i in best else None for i in range(last + 1)])
    return [{"iteration": i, "best": sum(c[i] for c in curves) / len(curves), "node": None, "reward": None}
            for i in range(last + 1) if all(c[i] is not None for c in curves)]


def _mean_section(histories: list[list[dict]]) -> list[str]:
    return [f"<h2>Best dev accuracy averaged over {len(histories)} runs</h2>", accuracy_plot(mean_curve(histories))]


def selections_view(selections: list[dict], tree: Tree, run: dict) -> str:
    """Every selection, level by level: each candidate's priority and the terms it adds up (NUCT eq. 1 and 2)."""
    if not selections:
        return "<p>(no NUCT selections recorded)</p>"
    nuct = run.get("config", {}).get("nuct", {})
    formula = ("<p>Executed: P = (R<sub>max</sub> &minus; R<sub>parent</sub>) + &lambda;<sub>expl</sub>"
               "&radic;(ln n<sub>parent</sub> / n<sub>i</sub>). Unexecuted: P = gain_scale&middot;s<sub>gain</sub> + "
               "&lambda;<sub>novel</sub>s<sub>novel</sub> + &lambda;<sub>sat</sub>&radic;(ln n<sub>parent</sub> / "
               "c<sub>exec</sub>) (inf while no sibling ran); ratings 1-10 normalised as (r &minus; 1) / 9. "
               f"Parameters: {html.escape(json.dumps(nuct))}.</p>")
    parts = [formula]
    for sel in selections:
        levels = "".join(_level_table(level, tree) for level in sel["levels"])
        path = " &rarr; ".join(f"#{n}" for n in sel["path"])
        parts.append(f"<details class=selection><summary>iteration {sel['iteration']}: {path}</summary>"
                     f"{levels}</details>")
    return "".join(parts)


def _level_table(level: dict, tree: Tree) -> str:
    rows = []
    for cand in level["candidates"]:
        node = tree.nodes.get(cand["node"])
        idea = html.escape(node.idea[:70]) if node else ""
        terms = ", ".join(f"{k} {v}" for k, v in cand["terms"].items())
        mark = " class=chosen" if cand["node"] == level["chosen"] else ""
        rows.append(f"<tr{mark}><td>#{cand['node']}</td><td>{idea}</td><td>{'yes' if cand['executed'] else 'no'}"
                    f"</td><td>{cand['priority']}</td><td>{html.escape(terms)}</td></tr>")
    return (f"<p>children of #{level['parent']} (chosen #{level['chosen']}):</p><table><tr><th>node</th><th>idea"
            "</th><th>executed</th><th>priority</th><th>terms</th></tr>" + "".join(rows) + "</table>")


def role_model(run: dict, role: str) -> str:
    """The model a SEVEX role ran on: the target's for `target`, the explorer's for ideator, engineer, analyst."""
    side = run.get("target" if role == "target" else "explorer") or {}
    return side.get("model") or DEFAULTS.get(side.get("backend") or "", "")


def role_prices(run: dict, role: str) -> dict[str, Price]:
    """The price table of the service tier the role's model ran on (standard for runs that did not record one)."""
    side = run.get("target" if role == "target" else "explorer") or {}
    return parse_prices(None, side.get("service_tier"))


def _cost_table(table: dict[str, dict], label: str, run: dict | None = None) -> str:
    """Tokens (cache reads and writes apart) per row; with the run's models, each role's list-price cost."""
    def priced(role: str, usage: dict) -> str:
        if run is None:
            return ""
        model = role_model(run, role)  # "" for a run folder without run.json: nothing to price it by
        dollars = cost(Usage(**usage), model, role_prices(run, role)) if model else None
        return f"<td>{'unknown' if dollars is None else f'${dollars:.4f}'}</td>"
    rows = "".join(f"<tr><td>{html.escape(r)}</td><td>{u['input_tokens']:,}</td>"
                   f"<td>{u.get('cached_tokens', 0):,}</td><td>{u.get('cache_write_tokens', 0):,}</td>"
                   f"<td>{u['output_tokens']:,}</td><td>{u['reasoning_tokens']:,}</td>{priced(r, u)}</tr>"
                   for r, u in sorted(table.items()))
    head = "<th>cost</th>" if run is not None else ""
    return (f"<table><tr><th>{label}</th><th>input</th><th>cache read</th><th>cache write</th><th>output</th>"
            f"<th>reasoning</th>{head}</tr>{rows}</table>")


def _failed_samples(node: Node) -> str:
    """How many of a node's dev samples failed, by kind ('' when none did): why a node scored low."""
    results = node.outcomes()
    kinds = Counter(str(r.failure) for r in results if broke(r))
    if not kinds:
        return ""
    counts = ", ".join(f"{html.escape(kind)} {n}" for kind, n in sorted(kinds.items()))
    return f"<p class=failures>{sum(kinds.values())} of {len(results)} sample runs failed: {counts}</p>"


def _subtree(tree: Tree, node: Node, best_id: int) -> str:
    status = f"acc {node.reward:.3f}" if node.executed else (
        f"pending; gain {node.self_eval.gain:g}, novelty {node.self_eval.novelty:g}")
    cls = "best" if node.id == best_id else ("" if node.executed else "pending")
    parts = [f'<details open class="{cls}" id="node-{node.id}"><summary>#{node.id} [{status}] '
             f"{html.escape(node.idea)}</summary>"]
    exp = node.experiment
    if exp:
        if exp.failure:
            parts.append(f"<p>failed: {html.escape(exp.failure)}</p>")
        parts.append(_failed_samples(node))
        if node.implementation:
            parts.append(f"<pre>{html.escape(node.implementation.code)}</pre><p>Prompt: "
                         f"{html.escape(node.implementation.prompt)}</p>")
        if exp.insights:
            parts.append("<p>Insights:</p><ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in exp.insights)
                         + "</ul>")
        for path in exp.images:
            p = Path(path)
            if p.exists():
                parts.append(f'<img alt="{html.escape(p.stem)}" title="{html.escape(p.stem)}" '
                             f'src="data:image/png;base64,{base64.b64encode(p.read_bytes()).decode()}">')
    if node.received_insights:
        parts.append("<p>Insights received from descendants:</p><ul>" + "".join(
            f"<li>{html.escape(i)}</li>" for i in node.received_insights) + "</ul>")
    parts += [_subtree(tree, child, best_id) for child in tree.children(node.id)]
    parts.append("</details>")
    return "".join(parts)
