"""A trace per sample a person can follow: JSONL events plus one PNG per image the model saw.

Within a run, each distinct image is stored once: the file lives in the run's shared store under its content hash,
and each sample's `images/<id>.png` is a hard link to it (a relative symlink where hard links are refused).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from trompe_kernel.version import __version__

from .messages import ImagePart, Message, ToolCall, Turn, Usage
from .runfolder import RunFolder

SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


class Trace:
    """Appends events to `<dir>/trace.jsonl` and saves images once each as `<dir>/images/<id>.png`; with a
    `store` folder shared by a run's traces, the bytes are kept there once per content."""

    def __init__(self, directory: RunFolder | Path | str, store: RunFolder | Path | str | None = None):
        self.folder = RunFolder.of(directory)  # a trace in a run folder is written without following links
        self.images = self.folder / "images"
        self.store = RunFolder.of(store) if store else None
        self.dir = self.folder.path
        self.path = self.dir / "trace.jsonl"
        self.images_dir = self.images.path
        for folder in (self.images, self.store) if self.store else (self.images,):
            os.close(folder.descriptor())  # made now, and refused now if a link stands in the way
        self.start = time.monotonic()
        self._saved: set[str] = {p.stem for p in self.images_dir.glob("*.png")}
        self._refused: OSError | None = None  # the first write the disk refused

    def event(self, kind: str, agent: str, **fields: Any) -> None:
        """Write one event line now (flushed), so a killed run still leaves a readable trace; each agent's start
        event names the trompe version that wrote it."""
        if kind == "start":
            fields.setdefault("trompe", __version__)
        record = {"t": round(time.monotonic() - self.start, 3), "event": kind, "agent": agent, **fields}
        with self._writing(), self.folder.log("trace.jsonl") as log:  # one write(2) a line, never a torn one
            log.append(json.dumps(record, ensure_ascii=False, default=str) + "\n")

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A write of this trace (a line or an image): after the disk refused one, every later one fails with that
        first error, since a failing disk turns read-only after it and the first error is the cause."""
        if self._refused is not None:
            raise self._refused
        try:
            yield
        except OSError as exc:
            self._refused = exc
            raise

    def save_images(self, images: list[ImagePart]) -> list[str]:
        """Store each image once by id; returns the ids, which is how the trace refers to them."""
        for image in images:
            name = SAFE_NAME.sub("_", image.id)
            if name not in self._saved:
                ext = "png" if image.mime_type == "image/png" else image.mime_type.rsplit("/", 1)[-1]
                target = f"{name}.{ext}"
                with self._writing():
                    if self.store is None:
                        self.images.write_bytes(target, image.data)
                    else:
                        link(self.store, store_once(self.store, image.data, ext), self.images, target)
                self._saved.add(name)
        return [image.id for image in images]

    # the events the agent loop writes -------------------------------------------------
    def message(self, agent: str, message: Message) -> None:
        """A system or user message: its text and the ids of its images."""
        self.event(message.role, agent, text=message.text, images=self.save_images(message.images))

    def assistant(self, agent: str, turn: Turn, backend: str, seconds: float) -> None:
        self.event("assistant", agent, backend=backend, model=turn.model, text=turn.message.text,
                   tool_calls=[call_json(c) for c in turn.message.tool_calls], stop_reason=turn.stop_reason,
                   usage=asdict(turn.usage), sent=turn.sent, seconds=round(seconds, 3))

    def tool_result(self, agent: str, message: Message, seconds: float) -> None:
        self.event("tool_result", agent, call_id=message.tool_call_id, name=message.tool_name,
                   is_error=message.is_error, text=message.text, images=self.save_images(message.images),
                   seconds=round(seconds, 3))


def store_once(store: RunFolder, data: bytes, ext: str) -> str:
    """The name of the store's file for these bytes, written (temp file, rename) only if no trace of the run wrote
    it whole.

    No fsync, as for results.jsonl: a killed process never leaves a partial image, and syncing every image
    stalled the run's event loop (2 ms each). A power cut can leave a short file, which the size check rewrites.
    """
    name = f"{hashlib.sha256(data).hexdigest()[:32]}.{ext}"
    if store.size(name) != len(data):
        store.write_atomic(name, data, sync=False)
    return name


def link(store: RunFolder, shared: str, folder: RunFolder, target: str) -> None:
    """`folder/target` names the store's file `shared` without copying it: a hard link, else a relative symlink;
    both made through the folders' descriptors, never through a link."""
    source, into = store.descriptor(), folder.descriptor()
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target, dir_fd=into)
        try:
            os.link(shared, target, src_dir_fd=source, dst_dir_fd=into, follow_symlinks=False)
        except OSError:
            os.symlink(os.path.relpath(store.path / shared, folder.path), target, dir_fd=into)
    finally:
        os.close(source)
        os.close(into)


def call_json(call: ToolCall) -> dict[str, Any]:
    """A tool call as the trace shows it; the raw text only when it did not parse."""
    shown: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.arguments is None:
        shown["raw_arguments"] = call.raw_arguments
    return shown


def read_events(path: Path | str) -> list[dict[str, Any]]:
    path = Path(path)
    if path.is_dir():
        path = path / "trace.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def render_text(path: Path | str, width: int = 300) -> str:
    """The trace as plain text, one block per event, long texts shortened to `width` characters."""
    lines = []
    for e in read_events(path):
        head = f"[{e['t']:8.2f}s] {e['agent']:<8} {e['event'].upper()}"
        kind = e["event"]
        if kind == "start":
            lines.append(f"{head} backend={e.get('backend')} model={e.get('model')} session={e.get('session')} "
                         f"tools={','.join(e.get('tools', []))}")
        elif kind in ("system", "user"):
            lines.append(f"{head}{_images(e)}\n{_indent(_short(e['text'], width))}")
        elif kind == "assistant":
            usage = e.get("usage") or {}
            kinds = (("cached_tokens", "cached"), ("cache_write_tokens", "written to cache"))
            cache = [f"{usage[k]} {label}" for k, label in kinds if usage.get(k)]
            lines.append(f"{head} {e.get('model')} ({e.get('seconds')}s, {usage.get('input_tokens')} in"
                         + (f" ({', '.join(cache)})" if cache else "") + f" / {usage.get('output_tokens')} out)")
            lines.extend(_indent(f"! {note}") for note in _vendor_notes(e.get("sent") or {}))
            if e.get("text"):
                lines.append(_indent(_short(e["text"], width)))
            for call in e.get("tool_calls", []):
                args = call.get("arguments")
                shown = json.dumps(args) if args is not None else f"<unparseable: {call.get('raw_arguments')!r}>"
                lines.append(_indent(f"-> {call['name']}({_short(shown, width)})"))
        elif kind == "tool_result":
            flag = " ERROR" if e.get("is_error") else ""
            lines.append(f"{head} {e.get('name')}{flag}{_images(e)}\n{_indent(_short(e['text'], width))}")
        elif kind == "answer":
            usage = e.get("usage") or {}
            lines.append(f"{head} stop={e.get('stop')} rounds={e.get('rounds')} tokens={Usage(**usage).total}"
                         + (f" error={e['error']}" if e.get("error") else "")
                         + f"\n{_indent(json.dumps(e.get('answer')))}")
        else:
            rest = {k: v for k, v in e.items() if k not in ("t", "event", "agent")}
            lines.append(f"{head} {_short(json.dumps(rest, default=str), width)}")
    return "\n".join(lines)


def _vendor_notes(sent: dict[str, Any]) -> list[str]:
    """What the backend did besides asking: a reader must see why the model changed or a request was repeated."""
    notes = [f"retried {r['model']} after {r['wait_s']}s: {r['reason']}" for r in sent.get("retries", [])]
    notes += [f"switched from {s['from']} to {s['to']}: {s['reason']}" for s in sent.get("model_switch", [])]
    if elided := (sent.get("images") or {}).get("images_elided"):
        notes.append(f"images of earlier rounds not re-sent: {', '.join(elided)}")
    if "temperature_rejected" in sent:
        notes.append(f"temperature dropped for the rest of the run: {sent['temperature_rejected']}")
    return notes


def _images(event: dict[str, Any]) -> str:
    return f"  [images: {', '.join(event['images'])}]" if event.get("images") else ""


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines()) or "    (empty)"
