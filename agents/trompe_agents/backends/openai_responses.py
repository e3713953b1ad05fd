"""`openai`: OpenAI's Responses API; tool-result images go back natively in `function_call_output`.

Reasoning models (GPT-5 and later) take no temperature; `--thinking` becomes `reasoning.effort` and the output
budget grows by the thinking budget (reasoning tokens count as output). The model's own output items are echoed
back with their wire names (`by_alias`), so a field whose Python name differs is never an unknown parameter.
OpenAI caches a repeated prompt prefix by itself; `usage.input_tokens_details.cached_tokens` reports the reads and
`cache_write_tokens` the writes (billed at their own rate). Each conversation sends one `prompt_cache_key`, so its
rounds reach the cache holding their prefix; `--service-tier flex` sends `service_tier: flex` (half price, slower).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import openai

from trompe_kernel.hookspecs import hookimpl

from ..messages import ImagePart, Message, TextPart, ToolSchema, Turn, Usage
from .base import BackendOptions
from .catalogue import ModelInfo, default_model, nearest_effort
from .replycap import client_settings
from .retry import Failure
from .settings import FLAG, setting, text
from .error_kinds import openai_failure, transport_failure
from .vendor import (VendorBackend, VendorSettings, api_key, data_url, json_schema_strict, parts_of, result_text,
                     system_text)
from .vendor import tool_call as neutral_call

FINAL_NAME = "final_answer"


def make_client(options: BackendOptions, backend: str, max_reply_bytes: int,
                keyless_ok: bool = False) -> openai.AsyncOpenAI:
    """An async OpenAI client without SDK retries; a local server (`--base-url`) may need no key."""
    base_url = options.base_url or os.environ.get("OPENAI_BASE_URL")
    if keyless_ok and base_url and not (options.api_key or os.environ.get("OPENAI_API_KEY")):
        key = "not-needed"  # vLLM, Ollama and llama.cpp ignore it, the SDK insists on one
    else:
        key = api_key(options, backend, "OPENAI_API_KEY")
    # Our own http client: the SDK's default one closes itself on garbage collection by scheduling the close
    # on whatever event loop runs then, which fails when the pool belongs to an earlier, closed loop.
    return openai.AsyncOpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=options.timeout,
                              http_client=openai.DefaultAsyncHttpxClient(**client_settings(max_reply_bytes)))


def classify(exc: BaseException) -> Failure | None:
    """OpenAI errors by kind (error_kinds.py); no HTTP answer at all is a transport failure."""
    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {"message": exc.body}  # a server's bare error string
        return openai_failure(exc.status_code, exc.code, getattr(exc, "type", None),
                              str(body.get("message") or exc.message), exc.response.headers)
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return transport_failure(exc)
    return None


def usage_of(prompt: int, completion: int, reasoning: int | None, cached: int | None,
             image: int | None = None, written: int | None = None) -> Usage:
    """OpenAI counts reasoning inside the completion, and cache reads and writes inside the prompt; the neutral
    model keeps reasoning apart."""
    reasoning = reasoning or 0
    return Usage(input_tokens=prompt, output_tokens=completion - reasoning, reasoning_tokens=reasoning,
                 cached_tokens=cached or 0, image_tokens=image, cache_write_tokens=written or 0)


def cheaper_modes(backend: VendorBackend, messages: list[Message], openai_api: bool = True) -> dict[str, str]:
    """`service_tier` (flex: half price, slower) and a `prompt_cache_key` per conversation, for OpenAI itself."""
    if not openai_api:
        return {}
    key = backend.prompt_cache_key(messages) if OpenAISettings.of(backend.options).prompt_cache else None
    return {**({"service_tier": backend.service_tier} if backend.service_tier else {}),
            **({"prompt_cache_key": key} if key else {})}


def reasoning_effort(info: ModelInfo, level: str | None) -> str | None:
    """`--thinking` as the reasoning effort this model accepts; None for models without reasoning control."""
    if level is None or info.thinking != "effort":
        return None
    return nearest_effort(info, level)


@dataclass(frozen=True)
class OpenAISettings(VendorSettings):
    """What OpenAI's two APIs take on top of every vendor's settings."""

    prompt_cache: bool = setting(True, FLAG, "a `prompt_cache_key` per conversation, so each round reaches the cache "
                                             "holding its prefix")
    image_detail: str | None = setting(None, text(("auto", "low", "high", "original")),
                                       "the `detail` of every image sent (low: 512 px, fewer tokens)",
                                       shown="none sent (auto)")


def image_detail(settings: OpenAISettings) -> dict[str, str]:
    return {"detail": settings.image_detail} if settings.image_detail else {}


class OpenAIResponsesBackend(VendorBackend):
    """OpenAI models through `responses.create`, temperature 0 unless the model refuses it."""

    name = "openai"
    Settings = OpenAISettings
    default_model = default_model("openai")
    truncated_stops = frozenset({"max_output_tokens"})  # status incomplete, incomplete_details.reason

    def new_client(self) -> openai.AsyncOpenAI:
        return make_client(self.options, self.name, self.settings.max_reply_bytes)

    def to_input(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Neutral messages as Responses input items; the model's own output items are echoed as received."""
        detail = image_detail(OpenAISettings.of(self.options))

        def image(i: ImagePart) -> dict[str, Any]:
            return {"type": "input_image", "image_url": data_url(i), **detail}

        def text(p: TextPart) -> dict[str, Any]:
            return {"type": "input_text", "text": p.text}

        items: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "user":
                items.append({"role": "user", "content": parts_of(m, text, image)})
            elif m.role == "assistant" and (echo := self.echo(m)) is not None:
                items.extend(echo)
            elif m.role == "assistant":
                if m.text:
                    items.append({"role": "assistant", "content": m.text})
                items += [{"type": "function_call", "call_id": c.id, "name": c.name,
                           "arguments": c.raw_arguments or json.dumps(c.arguments or {})} for c in m.tool_calls]
            elif m.role == "tool":
                output = [{"type": "input_text", "text": result_text(m)}] + [image(i) for i in m.images]
                items.append({"type": "function_call_output", "call_id": m.tool_call_id, "output": output})
        return items

    def request(self, model: str, messages: list[Message], tools: list[ToolSchema],
                final_schema: dict[str, Any] | None, max_output_tokens: int) -> tuple[dict, dict]:
        budget = self.output_budget(model, max_output_tokens)
        request: dict[str, Any] = {"model": model, "input": self.to_input(messages), "max_output_tokens": budget}
        if system := system_text(messages):
            request["instructions"] = system
        if tools:
            request["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                                 "parameters": t.parameters, "strict": json_schema_strict(t.parameters)}
                                for t in tools]
        native = self.native_final(final_schema, json_schema_strict(final_schema or {}))
        if native:
            request["text"] = {"format": {"type": "json_schema", "name": FINAL_NAME, "schema": final_schema,
                                          "strict": True}}
        temperature = self.temperature_for(model)
        if temperature is not None:
            request["temperature"] = temperature
        if effort := reasoning_effort(self.info(model), self.thinking):
            request["reasoning"] = {"effort": effort}
        request.update(modes := cheaper_modes(self, messages))
        return request, {"model": model, "max_output_tokens": budget, "temperature": temperature,
                         "final_format": "native" if native else "parser",
                         **({"reasoning_effort": effort} if effort else {}), **modes}

    async def send(self, model: str, request: dict[str, Any]) -> Any:
        return await self.client.responses.create(**request)

    def read(self, response: Any) -> Turn:
        calls = [neutral_call(i.call_id, i.name, i.arguments) for i in response.output if i.type == "function_call"]
        u = response.usage
        details = u.input_tokens_details if u else None
        usage = usage_of(u.input_tokens, u.output_tokens,
                         u.output_tokens_details.reasoning_tokens if u.output_tokens_details else 0,
                         details.cached_tokens if details else 0, None,
                         getattr(details, "cache_write_tokens", 0) if details else 0) if u else Usage()
        text = response.output_text
        message = self.reply(text, calls, [i.model_dump(mode="json", exclude_none=True, by_alias=True)
                                           for i in response.output])
        incomplete = response.incomplete_details.reason if response.incomplete_details else None
        stop = incomplete if response.status == "incomplete" and incomplete else response.status
        return Turn(message, usage, model=response.model, stop_reason=stop or "")

    def refusal(self, response: Any) -> str | None:
        """Refusal content parts of the output messages
        (platform.openai.com/docs/guides/structured-outputs#refusals)."""
        words = [c.refusal for i in response.output if i.type == "message" for c in i.content if c.type == "refusal"]
        return "\n".join(words) if words else None

    def classify(self, exc: BaseException) -> Failure | None:
        return classify(exc)


@hookimpl
def register_backends(register):
    register("openai", OpenAIResponsesBackend.from_options, settings=OpenAISettings)
