"""Traces a person can read without Python: a run's or a sample's trace as text or as one HTML page."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

from .statefiles import write_atomic
from .trace import SAFE_NAME, read_events, render_text

STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}.ok{color:#17803d}.bad{color:#b3261e}.muted{color:#777}
.step{border-left:3px solid #ccc;padding:4px 12px;margin:10px 0}.step.tool{border-color:#4a7bd0}
.step.assistant{border-color:#999}.step.final{border-color:#17803d}.step.route{border-color:#c58a00}
img.chain{max-width:420px;max-height:420px;border:1px solid #ccc;margin:4px 8px 4px 0;image-rendering:pixelated}
pre{white-space:pre-wrap;background:#f8f8f8;padding:6px;margin:4px 0}code{background:#f3f3f3}"""

ImageHref = Callable[[str], str]


def page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>{body}</body></html>")


def image_file(trace_dir: Path, image_id: str) -> Path:
    """The file a trace saved for an image id (PNG, or the format the model was sent)."""
    name = SAFE_NAME.sub("_", image_id)
    found = sorted((trace_dir / "images").glob(f"{name}.*"))
    return found[0] if found else trace_dir / "images" / f"{name}.png"


def hrefs_from(trace_dir: Path, page_dir: Path) -> ImageHref:
    """Links to a trace's images that work from a page written in `page_dir`."""
    return lambda image_id: Path(os.path.relpath(image_file(trace_dir, image_id), page_dir)).as_posix()


def images_html(ids: list[str], href: ImageHref) -> str:
    return "".join(f"<figure style='display:inline-block'><img class='chain' src='{escape(href(i))}' "
                   f"alt='{escape(i)}'><figcaption>{escape(i)}</figcaption></figure>" for i in ids)


def step_html(event: dict[str, Any], href: ImageHref, calls: dict[str, dict[str, Any]]) -> str:
    """One trace event as HTML: tool results show the call that made them and the image it produced."""
    kind, agent = event["event"], escape(event.get("agent", ""))
    if kind == "route":
        return (f"<div class='step route'><b>route ({escape(event.get('source', 'regex'))})</b>: "
                f"{escape(event.get('category', ''))} "
                f"(tools {escape(', '.join(event.get('tools', [])))})</div>")
    if kind == "normalize":
        return f"<div class='step route'><b>normalize</b>: <code>{escape(json.dumps(event.get('images')))}</code></div>"
    if kind == "preset":
        notes = "".join(f"<li>{escape(note)}</li>" for note in event.get("notes", []))
        return (f"<div class='step route'><b>preset {escape(str(event.get('name')))}</b>: "
                + (f"differs from the paper in<ul>{notes}</ul>" if notes else "as the paper states") + "</div>")
    if kind == "start":
        return f"<div class='step'><b>{agent}</b> agent starts: {escape(str(event.get('model')))}</div>"
    if kind == "system":
        return (f"<details class='step'><summary>{agent}: system prompt</summary>"
                f"<pre>{escape(event['text'])}</pre></details>")
    if kind == "user":
        return (f"<div class='step'><b>{agent}: user</b><pre>{escape(event['text'])}</pre>"
                f"{images_html(event.get('images', []), href)}</div>")
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
                f"{images_html(event.get('images', []), href)}</div>")
    if kind == "answer":
        error = f" <span class='bad'>error: {escape(str(event['error']))}</span>" if event.get("error") else ""
        return (f"<div class='step'><b>{agent} stops</b>: {escape(str(event.get('stop')))} after "
                f"{event.get('rounds')} rounds <code>{escape(json.dumps(event.get('answer')))}</code>{error}</div>")
    if kind == "final":
        return f"<div class='step final'><b>final answer from {agent}</b>: {escape(str(event.get('answer')))}</div>"
    return ""


def steps_html(trace_dir: Path, href: ImageHref) -> str:
    calls: dict[str, dict[str, Any]] = {}
    return "".join(step_html(event, href, calls) for event in read_events(trace_dir))


def find_traces(path: Path, sample: str | None = None) -> list[tuple[str, Path]]:
    """(name, folder) of each trace under `path`: a sample's folder, its trace.jsonl, or a whole run folder."""
    path = Path(path)
    if path.is_file() and path.name == "trace.jsonl":
        path = path.parent
    if (path / "trace.jsonl").is_file():
        found = [(path.name, path)]
    elif (path / "traces").is_dir():
        found = [(d.name, d) for d in sorted((path / "traces").iterdir()) if (d / "trace.jsonl").is_file()]
    else:
        raise FileNotFoundError(f"{path}: no trace.jsonl here and no traces/ folder; give a run folder or a "
                                "sample's trace folder")
    if sample is not None:
        wanted = SAFE_NAME.sub("_", sample)
        found = [(name, d) for name, d in found if name == wanted]
        if not found:
            raise FileNotFoundError(f"{path}: no trace for sample {sample!r}")
    if not found:
        raise FileNotFoundError(f"{path}: the run has no traces yet")
    return found


def show_text(path: Path, sample: str | None = None, width: int = 300) -> str:
    traces = find_traces(path, sample)
    if len(traces) == 1:
        return render_text(traces[0][1], width)
    return "\n\n".join(f"=== sample {name} ===\n{render_text(d, width)}" for name, d in traces)


def write_html(path: Path, out: Path | None = None, sample: str | None = None) -> Path:
    """One page with every step and image of the chosen traces; images are linked, not copied."""
    traces = find_traces(path, sample)
    target = Path(out) if out else (traces[0][1] if len(traces) == 1 else Path(path)) / "trace.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    if len(traces) == 1:
        name, folder = traces[0]
        body = f"<h1>trace: {escape(name)}</h1>" + steps_html(folder, hrefs_from(folder, target.parent))
    else:
        toc = "".join(f"<li><a href='#s-{escape(name)}'>{escape(name)}</a></li>" for name, _ in traces)
        sections = "".join(f"<details id='s-{escape(name)}'><summary><b>{escape(name)}</b></summary>"
                           f"{steps_html(folder, hrefs_from(folder, target.parent))}</details>"
                           for name, folder in traces)
        body = f"<h1>traces of {escape(str(path))}</h1><ol>{toc}</ol>{sections}"
    write_atomic(target, page(f"trace {path}", body))
    return target
