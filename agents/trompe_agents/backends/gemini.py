"""`gemini`: Google's generateContent through google-genai, function calling by hand (no automatic calls).

Tool-result images: Gemini 3 models take them inside the function response (`FunctionResponse.parts` with
inline data); for older models, the documented fallback puts image parts after the function responses in the
same user turn. The model's own content (thought signatures included) is kept in `Message.vendor` and sent
back exactly as received.

Sampling: Gemini 3 gets no temperature unless the user sets one (Google advises keeping the default 1.0); 2.x keeps
temperature 0. `--thinking` is `thinking_level` on Gemini 3 (its lowest level for "off": LOW on 3.8, which has no
MINIMAL) and `thinking_budget`
on 2.x (0 for "off"); the output budget grows by the thinking budget. Aliases such as `gemini-flash-latest` get
the capabilities of the model they stand for (backends/catalogue.py), never 2.x rules by default.
`--service-tier flex` sends `service_tier: flex` (half price, slower).
"""

from __future__ import annotations

import itertools
import logging
import weakref
from dataclasses import dataclass
from typing import Any

import httpx2
from google import genai
from google.genai import errors, types

from trompe_kernel.hookspecs import hookimpl

from ..messages import ImagePart, Message, TextPart, ToolSchema, Turn, Usage
from .base import BackendOptions
from .catalogue import THINKING_BUDGET, ModelInfo, default_model, lookup, nearest_effort
from .retry import Failure, Sleep
from .settings import setting, text
from .error_kinds import gemini_failure, transport_failure
from .replycap import client_settings
from .tls import shared_context
from .vendor import VendorBackend, VendorSettings, api_key, result_text, system_text
from .vendor import tool_call as neutral_call

SYNTHETIC_ID = "gemini-call-"  # ids we invent when the model gives none; never sent back
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError)
for _module in ("httpx2", "httpx", "aiohttp"):
    try:
        _mod = __import__(_module)
    except ImportError:
        continue
    TRANSPORT_ERRORS += tuple(getattr(_mod, n) for n in ("TransportError", "ClientError") if hasattr(_mod, n))


class _NoToolCallTextWarning(logging.Filter):
    """With a response schema set, the SDK reads every reply as text and warns when it is a tool call: our normal
    case (the calls are read from the parts), so the warning would only puzzle the user."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "non-text parts in the response" not in record.getMessage()


logging.getLogger("google_genai.types").addFilter(_NoToolCallTextWarning())


def images_in_function_response(model: str) -> bool:
    """Function responses with image parts are documented for Gemini 3 and later (aliases included)."""
    return lookup(model, "gemini").tool_images


def thinking_config(info: ModelInfo, level: str | None) -> types.ThinkingConfig | None:
    """`--thinking` as Gemini 3's thinking level or 2.x's thinking budget."""
    if level is None or info.thinking is None:
        return None
    if info.thinking == "level":
        return types.ThinkingConfig(thinking_level=nearest_effort(info, level).upper())
    return types.ThinkingConfig(thinking_budget=THINKING_BUDGET[level])


def _blob(image: ImagePart) -> types.Blob:
    return types.Blob(mime_type=image.mime_type, data=image.data)


def _user_parts(message: Message) -> list[types.Part]:
    return [types.Part(text=p.text) if isinstance(p, TextPart) else types.Part(inline_data=_blob(p))
            for p in message.parts]


@dataclass(frozen=True)
class GeminiSettings(VendorSettings):
    """Gemini's own settings, on top of every vendor's."""

    api_version: str = setting("v1beta", text(("v1beta", "v1", "v1alpha")), "the API version in the request path")


class GeminiBackend(VendorBackend):
    """Gemini models; the catalogue's temperature unless the `temperature` setting says otherwise."""

    name = "gemini"
    Settings = GeminiSettings
    default_model = default_model("gemini")
    truncated_stops = frozenset({"MAX_TOKENS"})

    def __init__(self, options: BackendOptions, sleep: Sleep | None = None):
        self.synthetic = itertools.count(1)
        # each genai client -> the httpx2 client it reads with (one left on an earlier event loop goes with it)
        self.transports: weakref.WeakKeyDictionary[genai.Client, httpx2.AsyncClient] = weakref.WeakKeyDictionary()
        super().__init__(options, sleep)

    def new_client(self) -> genai.Client:
        """A client reading replies through an httpx2 client of ours with the byte cap's hooks: google-genai's
        default aiohttp session takes none, so a huge reply would be read whole. One per event loop
        (VendorBackend.client), closed by close_client, since the SDK leaves a client it was given open."""
        options = self.options
        key = api_key(options, self.name, "GEMINI_API_KEY", "GOOGLE_API_KEY")
        transport = httpx2.AsyncClient(**client_settings(self.settings.max_reply_bytes))
        http = types.HttpOptions(base_url=options.base_url, api_version=GeminiSettings.of(options).api_version,
                                 timeout=int(options.timeout * 1000), httpx_async_client=transport,
                                 # the SDK's own sync client and websocket context share it too
                                 client_args={"verify": shared_context(), "follow_redirects": False},
                                 async_client_args={"ssl": shared_context()})
        client = genai.Client(api_key=key, http_options=http)
        self.transports[client] = transport
        return client

    async def close_client(self, client: genai.Client) -> None:
        await client.aio.aclose()
        transport = self.transports.pop(client, None)
        if transport is not None:
            await transport.aclose()

    def to_contents(self, model: str, messages: list[Message]) -> list[types.Content]:
        """Neutral messages as Contents; each run of tool results becomes one user turn."""
        native = images_in_function_response(model)
        names = {c.id: c.name for m in messages for c in m.tool_calls}
        contents: list[types.Content] = []
        for is_tool, group in itertools.groupby((m for m in messages if m.role != "system"),
                                                key=lambda m: m.role == "tool"):
            if is_tool:
                responses: list[types.Part] = []
                trailing: list[types.Part] = []
                for m in group:
                    text = result_text(m)
                    response = types.FunctionResponse(
                        id=None if (m.tool_call_id or SYNTHETIC_ID).startswith(SYNTHETIC_ID) else m.tool_call_id,
                        name=m.tool_name or names.get(m.tool_call_id or "", ""),
                        response={"error": text} if m.is_error else {"output": text},
                        parts=[types.FunctionResponsePart(inline_data=types.FunctionResponseBlob(
                            mime_type=i.mime_type, data=i.data)) for i in m.images] if native and m.images else None)
                    responses.append(types.Part(function_response=response))
                    if not native:
                        for i in m.images:
                            trailing += [types.Part(text=f"{i.id} (from {response.name}):"),
                                         types.Part(inline_data=_blob(i))]
                contents.append(types.Content(role="user", parts=responses + trailing))
                continue
            for m in group:
                if m.role == "user":
                    contents.append(types.Content(role="user", parts=_user_parts(m)))
                elif (echo := self.echo(m)) is not None:
                    contents.append(types.Content.model_validate(echo))
                else:
                    parts = [types.Part(text=m.text)] if m.text else []
                    parts += [types.Part(function_call=types.FunctionCall(
                        id=None if c.id.startswith(SYNTHETIC_ID) else c.id, name=c.name, args=c.arguments or {}))
                        for c in m.tool_calls]
                    contents.append(types.Content(role="model", parts=parts))
        return contents

    def request(self, model: str, messages: list[Message], tools: list[ToolSchema],
                final_schema: dict[str, Any] | None, max_output_tokens: int) -> tuple[dict, dict]:
        # Gemini 2.x refuses a JSON response type next to function calling; Gemini 3 combines them.
        info = self.info(model)
        native = self.native_final(final_schema, info.final_with_tools or not tools)
        temperature = self.temperature_for(model)
        thinking = thinking_config(info, self.thinking)
        budget = self.output_budget(model, max_output_tokens)
        config = types.GenerateContentConfig(
            system_instruction=system_text(messages) or None,
            tools=[types.Tool(function_declarations=[
                types.FunctionDeclaration(name=t.name, description=t.description, parameters_json_schema=t.parameters)
                for t in tools])] if tools else None,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            temperature=temperature, max_output_tokens=budget, thinking_config=thinking,
            response_mime_type="application/json" if native else None,
            response_json_schema=final_schema if native else None,
            service_tier=self.service_tier)
        request = {"contents": self.to_contents(model, messages), "config": config}
        return request, {"model": model, "max_output_tokens": budget, "temperature": temperature,
                         "final_format": "native" if native else "parser",
                         "tool_images": "function_response" if info.tool_images else "after",
                         **({"thinking": thinking.model_dump(exclude_none=True, mode="json")} if thinking else {}),
                         **({"service_tier": self.service_tier} if self.service_tier else {})}

    async def send(self, model: str, request: dict[str, Any]) -> Any:
        return await self.client.aio.models.generate_content(model=model, **request)

    def read(self, response: Any) -> Turn:
        candidate = response.candidates[0] if response.candidates else None
        content = candidate.content if candidate and candidate.content else types.Content(role="model", parts=[])
        parts = content.parts or []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        calls = [neutral_call(p.function_call.id or f"{SYNTHETIC_ID}{next(self.synthetic)}", p.function_call.name or "",
                              p.function_call.args or {}) for p in parts if p.function_call]
        u = response.usage_metadata
        usage = Usage()
        if u:
            images = [d.token_count or 0 for d in u.prompt_tokens_details or []
                      if d.modality == types.MediaModality.IMAGE]
            usage = Usage(input_tokens=u.prompt_token_count or 0, output_tokens=u.candidates_token_count or 0,
                          reasoning_tokens=u.thoughts_token_count or 0, cached_tokens=u.cached_content_token_count or 0,
                          image_tokens=sum(images) if u.prompt_tokens_details else None)
        message = self.reply(text, calls, content.model_dump(mode="json", exclude_none=True))
        reason = candidate.finish_reason if candidate else None
        return Turn(message, usage, model=response.model_version or "",
                    stop_reason=getattr(reason, "value", reason) or "")

    def refusal(self, response: Any) -> str | None:
        """A blocked prompt (promptFeedback.blockReason) or a candidate stopped by a safety filter (finishReason
        SAFETY and its kin: ai.google.dev/api/generate-content#FinishReason), with the categories it blocked."""
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason:
            return f"prompt blocked: {_value(feedback.block_reason)}{_blocked(feedback.safety_ratings)}" + \
                (f": {feedback.block_reason_message}" if feedback.block_reason_message else "")
        candidate = response.candidates[0] if response.candidates else None
        reason = _value(candidate.finish_reason) if candidate else ""
        if reason not in SAFETY_STOPS:
            return None
        return f"finishReason {reason}{_blocked(candidate.safety_ratings)}" + \
            (f": {candidate.finish_message}" if candidate.finish_message else "")

    def classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, errors.APIError):
            return classify_api_error(exc)
        if isinstance(exc, TRANSPORT_ERRORS):
            return transport_failure(exc)
        return None


# The finish reasons of a safety stop (ai.google.dev/api/generate-content#FinishReason); MAX_TOKENS is truncation.
SAFETY_STOPS = frozenset({"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY",
                          "IMAGE_PROHIBITED_CONTENT"})


def _value(enum: Any) -> str:
    return str(getattr(enum, "value", enum) or "")


def _blocked(ratings: Any) -> str:
    """The safety categories a filter blocked on, as ' (HARM_CATEGORY_..)'."""
    names = [_value(r.category) for r in ratings or [] if r.blocked]
    return f" ({', '.join(names)})" if names else ""


def classify_api_error(exc: errors.APIError) -> Failure:
    """Gemini's error body (code, status, message, details) read by error_kinds.gemini_failure."""
    body = exc.details if isinstance(exc.details, dict) else {}
    details = (body.get("error", body) or {}).get("details") or []
    headers = exc.response.headers if getattr(exc, "response", None) is not None else None
    return gemini_failure(exc.code, exc.status, str(exc.message), details, headers)


@hookimpl
def register_backends(register):
    register("gemini", GeminiBackend.from_options, settings=GeminiSettings)
