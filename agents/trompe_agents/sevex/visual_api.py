"""The functions generated code may call: the server's tools plus ask_lvlm, served from the parent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..backends.base import Backend, MissingCredentials, QuotaExhausted
from ..backends.catalogue import LOCAL_IMAGES
from ..messages import ImagePart, Message, TextPart, ToolSchema, Usage
from ..backends.model_images import ImagePolicy, prepare_messages
from ..toolclient import ToolClient

ASK = "ask_lvlm"
MAX_ASK_IMAGES = 16  # images one ask_lvlm call may show (fewer when the target's vendor allows fewer per request)
DEFAULT_IMAGES = ImagePolicy(LOCAL_IMAGES)  # the budget for a target that has no image policy of its own


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
        """One question to the target, its images within the budget the agent loop's requests have (the target's
        image policy: previews, per-image and per-request limits); too many images is the program's error."""
        images = args.get("images") or []
        if isinstance(images, str):
            images = [images]
        if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
            raise TypeError("ask_lvlm: images must be an image id or a list of image ids")
        policy = getattr(self.target, "images", None)
        policy = policy if isinstance(policy, ImagePolicy) else DEFAULT_IMAGES
        most = min(MAX_ASK_IMAGES, policy.limits.max_images)
        if len(images) > most:
            raise ValueError(f"ask_lvlm: {len(images)} images in one call; at most {most} per call (ask several "
                             "questions, or combine images with the tools first)")
        prompt = args.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("ask_lvlm: prompt must be a non-empty string")
        parts: list[Any] = [ImagePart(i, await self.tools.image_png(self.session, i)) for i in images]
        question, _ = prepare_messages([Message("user", parts + [TextPart(prompt)])], policy)
        try:
            turn = await self.target.complete(question, [])
        except (QuotaExhausted, MissingCredentials) as exc:
            self.fatal = exc
            raise
        self.usage = self.usage + turn.usage
        self.sent.append({"images": list(images), "prompt": prompt, "answer": turn.message.text})
        return turn.message.text
