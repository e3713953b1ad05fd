"""`openai-chat`: Chat Completions, for OpenAI and for OpenAI-compatible local servers (vLLM, Ollama, llama.cpp).

A `tool` message may only hold text (vLLM rejects images there, Ollama drops them), so a tool result's text goes
in the tool message, saying its image is attached below, and the images follow in one user message after the
run of tool messages.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..hookspecs import hookimpl
from ..messages import ImagePart, Message, TextPart, ToolSchema, Turn, Usage
from .base import BackendOptions
from .openai_responses import FINAL_NAME, classify, image_detail, make_client, usage_of
from .retry import Failure, Sleep
from .vendor import VendorBackend, data_url, json_schema_strict, parts_of, result_text
from .vendor import tool_call as neutral_call

IMAGE_NOTE = "image {ids} (attached below)"


class OpenAIChatBackend(VendorBackend):
    """Chat Completions; with a base URL it talks to any OpenAI-compatible server, key optional."""

    name = "openai-chat"
    default_model = "gpt-4.1-mini"

    def __init__(self, options: BackendOptions, sleep: Sleep | None = None):
        self.local = bool(options.base_url or os.environ.get("OPENAI_BASE_URL"))
        super().__init__(options, sleep)

    def new_client(self) -> Any:
        return make_client(self.options, self.name, keyless_ok=True)

    def to_messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Neutral messages as chat messages, tool-result images moved into a trailing user message."""
        detail = image_detail(self.options)

        def image(i: ImagePart) -> dict[str, Any]:
            return {"type": "image_url", "image_url": {"url": data_url(i), **detail}}

        def text(p: TextPart) -> dict[str, Any]:
            return {"type": "text", "text": p.text}

        out: list[dict[str, Any]] = []
        pending: list[ImagePart] = []
        for m in messages:
            if m.role != "tool" and pending:
                out.append(self.images_message(pending, image))
                pending = []
            if m.role == "system":
                out.append({"role": "system", "content": m.text})
            elif m.role == "user":
                out.append({"role": "user", "content": parts_of(m, text, image)})
            elif m.role == "assistant":
                message: dict[str, Any] = {"role": "assistant", "content": m.text or None}
                if m.tool_calls:
                    message["tool_calls"] = [
                        {"id": c.id, "type": "function", "function": {
                            "name": c.name, "arguments": c.raw_arguments or json.dumps(c.arguments or {})}}
                        for c in m.tool_calls]
                out.append(message)
            else:
                out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": result_text(m, IMAGE_NOTE)})
                pending += m.images
        if pending:
            out.append(self.images_message(pending, image))
        return out

    @staticmethod
    def images_message(images: list[ImagePart], image) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": "Images returned by the tool calls above:"}]
        for i in images:
            content += [{"type": "text", "text": f"{i.id}:"}, image(i)]
        return {"role": "user", "content": content}

    def request(self, model: str, messages: list[Message], tools: list[ToolSchema],
                final_schema: dict[str, Any] | None, max_output_tokens: int) -> tuple[dict, dict]:
        # Local servers know max_tokens; OpenAI's reasoning models accept only max_completion_tokens.
        limit = "max_tokens" if self.local else "max_completion_tokens"
        request: dict[str, Any] = {"model": model, "messages": self.to_messages(messages), limit: max_output_tokens}
        if tools:
            request["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}} for t in tools]
        # Local servers enforce response_format by guided decoding, which would forbid tool calls.
        native = self.native_final(final_schema, json_schema_strict(final_schema or {}) and not (self.local and tools))
        if native:
            request["response_format"] = {"type": "json_schema", "json_schema": {
                "name": FINAL_NAME, "schema": final_schema, "strict": True}}
        if self.temperature is not None:
            request["temperature"] = self.temperature
        return request, {"model": model, limit: max_output_tokens, "temperature": self.temperature,
                         "final_format": "native" if native else "parser"}

    async def send(self, model: str, request: dict[str, Any]) -> Any:
        return await self.client.chat.completions.create(**request)

    def read(self, response: Any) -> Turn:
        choice = response.choices[0]
        calls = [neutral_call(c.id, c.function.name, c.function.arguments)
                 for c in choice.message.tool_calls or [] if c.type == "function"]
        u = response.usage
        if u:
            done, prompt = u.completion_tokens_details, u.prompt_tokens_details
            usage = usage_of(u.prompt_tokens, u.completion_tokens, done.reasoning_tokens if done else 0,
                             prompt.cached_tokens if prompt else 0,
                             getattr(prompt, "image_tokens", None) if prompt else None)
        else:
            usage = Usage()
        text = choice.message.content or ""
        message = self.reply(text, calls)
        return Turn(message, usage, model=response.model, stop_reason=choice.finish_reason or "")

    def classify(self, exc: BaseException) -> Failure | None:
        return classify(exc)


@hookimpl
def register_backends(register):
    register("openai-chat", OpenAIChatBackend.from_options)
