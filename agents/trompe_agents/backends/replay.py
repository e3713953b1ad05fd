"""Record a backend's requests and replies to a JSONL cassette, and play them back offline.

`--record FILE` wraps any backend: each call appends one line {key, backend, model, request, response}.
Requests are stored in neutral form (messages, tools, final_schema) with images as sha256 digests, never
base64. `--backend replay --model FILE` answers each request with the recorded reply of an identical
request and fails loudly, with a diff against the closest recorded request, when none matches.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from trompe_kernel.hookspecs import hookimpl

from ..messages import ImagePart, Message, TextPart, ToolCall, ToolSchema, Turn, Usage
from .base import Backend, BackendError, BackendOptions
from .settings import BackendSettings, setting, text


class ReplayMismatch(BackendError):
    """A request the cassette never saw: the prompt, tools or images changed since recording."""


def part_json(part: TextPart | ImagePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"text": part.text}
    return {"image": part.id, "sha256": hashlib.sha256(part.data).hexdigest(), "mime_type": part.mime_type}


def message_json(message: Message) -> dict[str, Any]:
    """A message as the cassette stores it; vendor payloads are left out of requests (they are echoes)."""
    return {"role": message.role, "parts": [part_json(p) for p in message.parts],
            "tool_calls": [asdict(c) for c in message.tool_calls], "tool_call_id": message.tool_call_id,
            "tool_name": message.tool_name, "is_error": message.is_error}


def request_json(messages: list[Message], tools: list[ToolSchema], final_schema: dict[str, Any] | None,
                 max_output_tokens: int) -> dict[str, Any]:
    return {"messages": [message_json(m) for m in messages], "tools": [asdict(t) for t in tools],
            "final_schema": final_schema, "max_output_tokens": max_output_tokens}


def request_key(request: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()


def turn_json(turn: Turn) -> dict[str, Any]:
    message = message_json(turn.message)
    message["vendor"] = to_jsonable_python(turn.message.vendor, fallback=repr, bytes_mode="base64")
    return {"message": message, "usage": asdict(turn.usage), "model": turn.model,
            "stop_reason": turn.stop_reason, "sent": to_jsonable_python(turn.sent, fallback=repr)}


def turn_from_json(data: dict[str, Any]) -> Turn:
    m = data["message"]
    if any("image" in p for p in m["parts"]):
        raise BackendError("replay: a recorded reply holds an image, which cassettes do not store")
    message = Message(m["role"], [TextPart(p["text"]) for p in m["parts"]],
                      [ToolCall(**c) for c in m["tool_calls"]], m["tool_call_id"], m["tool_name"],
                      m["is_error"], m.get("vendor"))
    return Turn(message, Usage(**data["usage"]), data["model"], data["stop_reason"], data.get("sent") or {})


class Recorder:
    """Wraps a backend and appends every request and reply to a cassette."""

    def __init__(self, inner: Backend, path: str | Path):
        self.inner = inner
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.name = inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(self, messages: list[Message], tools: list[ToolSchema], *,
                       final_schema: dict[str, Any] | None = None, max_output_tokens: int = 4096) -> Turn:
        turn = await self.inner.complete(messages, tools, final_schema=final_schema,
                                         max_output_tokens=max_output_tokens)
        request = request_json(messages, tools, final_schema, max_output_tokens)
        entry = {"key": request_key(request), "backend": self.inner.name, "model": turn.model,
                 "request": request, "response": turn_json(turn)}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
        return turn


@dataclass(frozen=True)
class ReplaySettings(BackendSettings):
    """Where the recorded exchanges are, when --model does not say."""

    cassette: str | None = setting(None, text(what="a file"), "the JSONL cassette to play back",
                                   shown="--model")


class ReplayBackend:
    """Answers from a cassette; identical requests replay their recorded replies in recorded order."""

    name = "replay"

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise BackendError(f"replay: cassette {str(self.path)!r} not found; record one with --record FILE")
        self.entries = [self.read_entry(number, line) for number, line
                        in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1) if line.strip()]
        self.by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for entry in self.entries:
            self.by_key[entry["key"]].append(entry)
        self.used: dict[str, int] = defaultdict(int)
        self.model = self.entries[0]["model"] if self.entries else "replay"

    def read_entry(self, number: int, line: str) -> dict[str, Any]:
        """One cassette line; a damaged one (e.g. from a run killed mid-write) is named by file and line."""
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            entry = exc
        if not isinstance(entry, dict) or not {"key", "model", "response"} <= entry.keys():
            raise BackendError(f"replay: {str(self.path)!r} line {number} is not a recorded request ({line[:60]!r}); "
                               "record the cassette again with --record FILE")
        return entry

    @classmethod
    def from_options(cls, options: BackendOptions) -> ReplayBackend:
        path = ReplaySettings.of(options).cassette or options.model
        if not path:
            raise BackendError("the replay backend needs the cassette: --backend replay --model FILE.jsonl")
        return cls(path)

    async def complete(self, messages: list[Message], tools: list[ToolSchema], *,
                       final_schema: dict[str, Any] | None = None, max_output_tokens: int = 4096) -> Turn:
        request = request_json(messages, tools, final_schema, max_output_tokens)
        key = request_key(request)
        recorded = self.by_key.get(key)
        if not recorded:
            raise ReplayMismatch(self.mismatch(request))
        entry = recorded[min(self.used[key], len(recorded) - 1)]
        self.used[key] += 1
        self.model = entry["model"]
        return turn_from_json(entry["response"])

    def mismatch(self, request: dict[str, Any]) -> str:
        """Explain a miss: a unified diff against the recorded request that is most alike."""
        head = f"replay: this request was never recorded in {self.path} ({len(self.entries)} requests recorded)"
        if not self.entries:
            return head
        lines = _pretty(request)
        closest = max(self.entries, key=lambda e: difflib.SequenceMatcher(
            None, _pretty(e["request"]), lines, autojunk=False).ratio())
        diff = list(difflib.unified_diff(_pretty(closest["request"]), lines, "recorded (closest)", "requested",
                                         n=2, lineterm=""))
        shown = diff[:60] + ([f"... {len(diff) - 60} more diff lines"] if len(diff) > 60 else [])
        return head + "; closest recorded request differs:\n" + "\n".join(shown)


def _pretty(request: dict[str, Any]) -> list[str]:
    return json.dumps(request, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


@hookimpl
def register_backends(register):
    register("replay", ReplayBackend.from_options, settings=ReplaySettings)
