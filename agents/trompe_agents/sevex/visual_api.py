"""The functions generated code may call: the server's tools plus ask_lvlm, served from the parent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..backends.base import Backend, MissingCredentials, QuotaExhausted
from ..messages import ImagePart, Message, TextPart, ToolSchema, Usage
from ..toolclient import ToolClient

ASK = "ask_lvlm"


def api_signatures(tools: list[ToolSchema]) -> dict[str, list[str]]:
    """Each callable's parameter names in order (how positional arguments are matched)."""
    api = {t.name: list(t.parameters.get("properties", {})) for t in tools}
    api[ASK] = ["images", "prompt"]
    return api


def api_reference(tools: list[ToolSchema]) -> str:
    """One line per tool for the engineer's prompt: signature and what it does."""
    lines = []
    for t in tools:
        props = t.parameters.get("properties", {})
        required = set(t.parameters.get("required", []))
        params = ", ".join(p if p in required else f"{p}={props[p].get('default')!r}" for p in props)
        summary = (t.description or "").strip().splitlines()[0] if t.description else ""
        lines.append(f"- `{t.name}({params})`: {summary}")
    return "\n".join(lines)


@dataclass
class SampleBridge:
    """Serves one sample's program: tool calls on its session, LVLM questions to the target backend."""

    tools: ToolClient
    session: str
    target: Backend
    usage: Usage = field(default_factory=Usage)
    sent: list[dict[str, Any]] = field(default_factory=list)  # what each ask_lvlm call showed the LVLM
    fatal: Exception | None = None  # the target cannot answer anyone (no quota, no key): stop, don't score

    def handlers(self, names: list[str]) -> dict[str, Any]:
        table = {name: self._tool(name) for name in names}
        table[ASK] = self.ask
        return table

    def _tool(self, name: str):
        async def call(args: dict[str, Any]) -> Any:
            result = await self.tools.call(self.session, name, args)
            if result.is_error:
                raise RuntimeError(result.text)
            meta = result.structured or {}
            if meta.get("created"):
                return meta["image"]
            return meta.get("data") or result.text

        return call

    async def ask(self, args: dict[str, Any]) -> str:
        images = args.get("images") or []
        if isinstance(images, str):
            images = [images]
        prompt = args.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("ask_lvlm: prompt must be a non-empty string")
        parts: list[Any] = [ImagePart(i, await self.tools.image_png(self.session, i)) for i in images]
        try:
            turn = await self.target.complete([Message("user", parts + [TextPart(prompt)])], [])
        except (QuotaExhausted, MissingCredentials) as exc:
            self.fatal = exc
            raise
        self.usage = self.usage + turn.usage
        self.sent.append({"images": list(images), "prompt": prompt, "answer": turn.message.text})
        return turn.message.text
