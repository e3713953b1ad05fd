"""`claude`: Anthropic's Messages API; tool-result images go back natively inside `tool_result` blocks.

Temperature: `messages.create` has no temperature parameter, so it travels in `extra_body` (default 0; set
`extra["temperature"] = None` to send none). Models that refuse it answer 400; the backend then drops it for the
rest of the run and records that in `Turn.sent`. `extra["anthropic_version"]` overrides the API version header.
"""

from __future__ import annotations

from typing import Any

import anthropic

from ..hookspecs import hookimpl
from ..messages import ImagePart, Message, TextPart, ToolSchema, Turn, Usage
from .base import BackendOptions
from .retry import Failure, Sleep
from .vendor import VendorBackend, api_key, b64, http_failure, json_schema_strict, parts_of, result_text, system_text
from .vendor import tool_call as neutral_call


def _image(image: ImagePart) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": b64(image)}}


def _text(part: TextPart) -> dict[str, Any]:
    return {"type": "text", "text": part.text}


def _assistant(message: Message, echo: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The blocks as Claude sent them (thinking signatures included), or rebuilt from the neutral message."""
    if echo is not None:
        return echo
    blocks = [_text(p) for p in message.parts if isinstance(p, TextPart) and p.text]
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}}
               for c in message.tool_calls]
    return blocks


class ClaudeBackend(VendorBackend):
    """Claude through the official async SDK, with our retry policy instead of the SDK's."""

    name = "claude"
    default_model = "claude-sonnet-4-6"

    def __init__(self, options: BackendOptions, sleep: Sleep | None = None):
        self.version = options.extra.get("anthropic_version")
        super().__init__(options, sleep)

    def new_client(self) -> anthropic.AsyncAnthropic:
        # Our own http client, as in openai_responses.make_client: safe to garbage-collect after its loop closed.
        return anthropic.AsyncAnthropic(
            api_key=api_key(self.options, self.name, "ANTHROPIC_API_KEY"), base_url=self.options.base_url,
            max_retries=0, timeout=self.options.timeout, http_client=anthropic.DefaultAsyncHttpxClient(),
            default_headers={"anthropic-version": self.version} if self.version else None)

    def to_messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Neutral messages as Messages API turns; tool results and following user text share one user turn."""
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "system":
                continue
            if m.role == "assistant":
                out.append({"role": "assistant", "content": _assistant(m, self.echo(m))})
                continue
            if m.role == "tool":
                content = [{"type": "text", "text": result_text(m)}] + [_image(i) for i in m.images]
                blocks = [{"type": "tool_result", "tool_use_id": m.tool_call_id, "content": content,
                           **({"is_error": True} if m.is_error else {})}]
            else:
                blocks = [b for b in parts_of(m, _text, _image) if b["type"] != "text" or b["text"]]
            if out and out[-1]["role"] == "user":
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": "user", "content": blocks})
        return out

    def request(self, model: str, messages: list[Message], tools: list[ToolSchema],
                final_schema: dict[str, Any] | None, max_output_tokens: int) -> tuple[dict, dict]:
        request: dict[str, Any] = {"model": model, "max_tokens": max_output_tokens,
                                   "messages": self.to_messages(messages)}
        if system := system_text(messages):
            request["system"] = system
        if tools:
            request["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                                for t in tools]
        native = self.native_final(final_schema, json_schema_strict(final_schema or {}))
        if native:
            request["output_config"] = {"format": {"type": "json_schema", "schema": final_schema}}
        if self.temperature is not None:
            request["extra_body"] = {"temperature": self.temperature}
        sent = {"model": model, "max_tokens": max_output_tokens, "temperature": self.temperature,
                "temperature_via": "extra_body" if self.temperature is not None else "not sent",
                "final_format": "native" if native else "parser"}
        if self.version:
            sent["anthropic_version"] = self.version
        return request, sent

    async def send(self, model: str, request: dict[str, Any]) -> Any:
        return await self.client.messages.create(**request)

    def read(self, response: Any) -> Turn:
        text = "".join(b.text for b in response.content if b.type == "text")
        calls = [neutral_call(b.id, b.name, b.input) for b in response.content if b.type == "tool_use"]
        u = response.usage
        thinking = u.output_tokens_details.thinking_tokens if u.output_tokens_details else 0
        cached = u.cache_read_input_tokens or 0
        usage = Usage(input_tokens=u.input_tokens + cached + (u.cache_creation_input_tokens or 0),
                      output_tokens=u.output_tokens - thinking, reasoning_tokens=thinking, cached_tokens=cached)
        message = self.reply(text, calls, [b.model_dump(mode="json", exclude_none=True) for b in response.content])
        return Turn(message, usage, model=response.model, stop_reason=response.stop_reason or "")

    def classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, anthropic.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            error = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
            kind, text = error.get("type", ""), error.get("message") or str(exc)
            quota = exc.status_code == 402 or kind == "billing_error" or "credit balance" in text
            return http_failure(exc.status_code, exc.response.headers, f"{exc.status_code} {kind}: {text}", quota)
        if isinstance(exc, anthropic.APIConnectionError):  # includes timeouts
            return Failure("retry", f"{type(exc).__name__}: {exc}")
        return None


@hookimpl
def register_backends(register):
    register("claude", ClaudeBackend.from_options)
