"""`openai-chat`: Chat Completions, for OpenAI and for OpenAI-compatible local servers (vLLM, Ollama, llama.cpp).

A `tool` message may only hold text (vLLM rejects images there, Ollama drops them), so a tool result's text goes
in the tool message, saying its image is attached below, and the images follow in one user message after the
run of tool messages.

Which API it talks to is decided by capability, not by whether a base URL is set (a proxy in front of OpenAI is
not a local server): `--backend-option api=openai` or `api=compatible` says it; otherwise a model the catalogue
knows as OpenAI's gets OpenAI's rules (`max_completion_tokens`, `reasoning_effort`, no temperature on reasoning
models) and any other model a local server's (`max_tokens`, temperature 0).

GPT-5.6 and later (GPT-6.x) refuse function tools on Chat Completions unless `reasoning_effort` is `"none"`, also
when it is left out: with tools those models get `none` whatever `--thinking` says, and the trace says so
(`reasoning_effort_asked`); `--backend openai` (Responses) reasons with tools.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from trompe_kernel.hookspecs import hookimpl

from ..messages import ImagePart, Message, TextPart, ToolSchema, Turn, Usage
from .base import BackendOptions
from .catalogue import LOCAL_IMAGES, ImageLimits, default_model, lookup
from .openai_responses import (FINAL_NAME, OpenAISettings, cheaper_modes, classify, image_detail, make_client,
                               reasoning_effort, usage_of)
from .retry import Failure, Sleep
from .settings import setting, text
from .vendor import VendorBackend, data_url, json_schema_strict, parts_of, result_text
from .vendor import tool_call as neutral_call

IMAGE_NOTE = "image {ids} (attached below)"


@dataclass(frozen=True)
class OpenAIChatSettings(OpenAISettings):
    """Chat Completions' own settings, on top of OpenAI's."""

    api: str | None = setting(None, text(("openai", "compatible")),
                              "whose rules apply: OpenAI's, or an OpenAI-compatible server's (vLLM, Ollama, ...)",
                              shown="openai for a model the catalogue knows")


class OpenAIChatBackend(VendorBackend):
    """Chat Completions; with a base URL it talks to any OpenAI-compatible server, key optional."""

    name = "openai-chat"
    Settings = OpenAIChatSettings
    default_model = default_model("openai-chat")
    truncated_stops = frozenset({"length"})

    def __init__(self, options: BackendOptions, sleep: Sleep | None = None):
        self.api = OpenAIChatSettings.of(options).api
        super().__init__(options, sleep)

    @property
    def checks_models(self) -> bool:
        """Only against OpenAI itself: a local server's model names are its own."""
        local = self.options.base_url or os.environ.get("OPENAI_BASE_URL")
        return self.api == "openai" or (self.api is None and not local)

    def is_openai(self, model: str) -> bool:
        """OpenAI's own rules apply: said so, or a model the catalogue knows as OpenAI's."""
        if self.api:
            return self.api == "openai"
        return lookup(model, "openai").status != "unknown"

    def image_limits(self) -> ImageLimits:
        return super().image_limits() if self.is_openai(self.options.model or self.default_model) else LOCAL_IMAGES

    def temperature_for(self, model: str) -> float | None:
        return super().temperature_for(model) if self.is_openai(model) or self.user_temperature else self.temperature

    def new_client(self) -> Any:
        return make_client(self.options, self.name, self.settings.max_reply_bytes, keyless_ok=True)

    def to_messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Neutral messages as chat messages, tool-result images moved into a trailing user message."""
        detail = image_detail(OpenAIChatSettings.of(self.options))

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
        openai_api = self.is_openai(model)
        limit = "max_completion_tokens" if openai_api else "max_tokens"
        budget = self.output_budget(model, max_output_tokens) if openai_api else max_output_tokens
        request: dict[str, Any] = {"model": model, "messages": self.to_messages(messages), limit: budget}
        if tools:
            request["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}} for t in tools]
        # Local servers enforce response_format by guided decoding, which would forbid tool calls.
        native = self.native_final(final_schema, json_schema_strict(final_schema or {}) and (openai_api or not tools))
        if native:
            request["response_format"] = {"type": "json_schema", "json_schema": {
                "name": FINAL_NAME, "schema": final_schema, "strict": True}}
        temperature = self.temperature_for(model)
        if temperature is not None:
            request["temperature"] = temperature
        info = self.info(model)
        effort = reasoning_effort(info, self.thinking) if openai_api else None
        forced = {}
        if openai_api and tools and info.chat_tools_effort and effort != info.chat_tools_effort:
            # GPT-5.6+ / GPT-6 refuse function tools on Chat Completions unless reasoning_effort is "none", also when
            # it is left out (their default effort applies): models.toml `chat_tools_effort`
            forced = {"reasoning_effort_asked": effort or "default",
                      "reasoning_effort_why": f"Chat Completions refuses function tools with reasoning on {model}; "
                                              "--backend openai (Responses) reasons with tools"}
            effort = info.chat_tools_effort
            request[limit] = budget = self.output_budget(model, max_output_tokens, "off")
        if effort:
            request["reasoning_effort"] = effort
        request.update(modes := cheaper_modes(self, messages, openai_api))
        return request, {"model": model, limit: budget, "temperature": temperature,
                         "api": "openai" if openai_api else "compatible",
                         "final_format": "native" if native else "parser",
                         **({"reasoning_effort": effort} if effort else {}), **forced, **modes}

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
                             getattr(prompt, "image_tokens", None) if prompt else None,
                             getattr(prompt, "cache_write_tokens", 0) if prompt else 0)
        else:
            usage = Usage()
        text = choice.message.content or ""
        message = self.reply(text, calls)
        turn = Turn(message, usage, model=response.model, stop_reason=choice.finish_reason or "")
        if reasoning := local_reasoning(choice.message):
            turn.sent["narration"] = reasoning
        return turn

    def refusal(self, response: Any) -> str | None:
        """`message.refusal` (platform.openai.com/docs/guides/structured-outputs#refusals)."""
        return (response.choices[0].message.refusal or None) if response.choices else None

    def classify(self, exc: BaseException) -> Failure | None:
        return classify(exc)


def local_reasoning(message: Any) -> str:
    """The thinking a local server returns beside the answer: vLLM's `reasoning_content` (docs.vllm.ai, Reasoning
    Outputs) or Ollama's `reasoning` (its OpenAI-compatible API); not in OpenAI's own schema, so read as extras."""
    extra = message.model_extra or {}
    return str(extra.get("reasoning_content") or extra.get("reasoning") or "")


@hookimpl
def register_backends(register):
    register("openai-chat", OpenAIChatBackend.from_options, settings=OpenAIChatSettings)
