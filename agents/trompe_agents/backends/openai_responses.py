"""`openai`: OpenAI's Responses API; tool-result images go back natively in `function_call_output`.

Reasoning models (GPT-5 and later) take no temperature; `--thinking` becomes `reasoning.effort` and the output
budget grows by the thinking budget (reasoning tokens count as output). The model's own output items are echoed
back with their wire names (`by_alias`), so a field whose Python name differs is never an unknown parameter.
OpenAI caches a repeated prompt prefix by itself; `usage.input_tokens_details.cached_tokens` reports it.
"""

from __future__ import annotations

import json
import os
from typing import Any

import openai

from ..hookspecs import hookimpl
from ..messages import ImagePart, Message, TextPart, ToolSchema, Turn, Usage
from .base import BackendOptions
from .catalogue import ModelInfo, default_model, nearest_effort
from .retry import Failure
from .error_kinds import openai_failure, transport_failure
from .vendor import (VendorBackend, api_key, data_url, json_schema_strict, parts_of, result_text,
                     system_text)
from .vendor import tool_call as neutral_call

FINAL_NAME = "final_answer"


def make_client(options: BackendOptions, backend: str, keyless_ok: bool = False) -> openai.AsyncOpenAI:
    """An async OpenAI client without SDK retries; a local server (`--base-url`) may need no key."""
    base_url = options.base_url or os.environ.get("OPENAI_BASE_URL")
    if keyless_ok and base_url and not (options.api_key or os.environ.get("OPENAI_API_KEY")):
        key = "not-needed"  # vLLM, Ollama and llama.cpp ignore it, the SDK insists on one
    else:
        key = api_key(options, backend, "OPENAI_API_KEY")
    # Our own http client: the SDK's default one closes itself on garbage collection by scheduling the close
    # on whatever event loop runs then, which fails when the pool belongs to an earlier, closed loop.
    return openai.AsyncOpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=options.timeout,
                              http_client=openai.DefaultAsyncHttpxClient())


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
             image: int | None = None) -> Usage:
    """OpenAI counts reasoning inside the completion; the neutral model keeps them apart."""
    reasoning = reasoning or 0
    return Usage(input_tokens=prompt, output_tokens=completion - reasoning, reasoning_tokens=reasoning,
                 cached_tokens=cached or 0, image_tokens=image)


def reasoning_effort(info: ModelInfo, level: str | None) -> str | None:
    """`--thinking` as the reasoning effort this model accepts; None for models without reasoning control."""
    if level is None or info.thinking != "effort":
        return None
    return nearest_effort(info, level)


def image_detail(options: BackendOptions) -> dict[str, str]:
    detail = options.extra.get("image_detail")
    return {"detail": detail} if detail else {}


class OpenAIResponsesBackend(VendorBackend):
    """OpenAI models through `responses.create`, temperature 0 unless the model refuses it."""

    name = "openai"
    default_model = default_model("openai")

    def new_client(self) -> openai.AsyncOpenAI:
        return make_client(self.options, self.name)

    def to_input(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Neutral messages as Responses input items; the model's own output items are echoed as received."""
        detail = image_detail(self.options)

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
        return request, {"model": model, "max_output_tokens": budget, "temperature": temperature,
                         "final_format": "native" if native else "parser",
                         **({"reasoning_effort": effort} if effort else {})}

    async def send(self, model: str, request: dict[str, Any]) -> Any:
        return await self.client.responses.create(**request)

    def read(self, response: Any) -> Turn:
        calls = [neutral_call(i.call_id, i.name, i.arguments) for i in response.output if i.type == "function_call"]
        u = response.usage
        usage = usage_of(u.input_tokens, u.output_tokens,
                         u.output_tokens_details.reasoning_tokens if u.output_tokens_details else 0,
                         u.input_tokens_details.cached_tokens if u.input_tokens_details else 0) if u else Usage()
        text = response.output_text
        message = self.reply(text, calls, [i.model_dump(mode="json", exclude_none=True, by_alias=True)
                                           for i in response.output])
        return Turn(message, usage, model=response.model, stop_reason=response.status or "")

    def classify(self, exc: BaseException) -> Failure | None:
        return classify(exc)


@hookimpl
def register_backends(register):
    register("openai", OpenAIResponsesBackend.from_options)
