"""What the four hosted-API backends share: credentials, the retrying request skeleton, small translations."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import anyio

from ..failures import ErrorKind
from ..messages import ImagePart, Message, TextPart, ToolCall, ToolSchema, Turn, Usage
from .model_images import ImagePolicy, prepare_messages
from .base import DEFAULT_TIMEOUT, BackendError, BackendOptions, MissingCredentials
from .catalogue import (THINKING_BUDGET, VENDOR_OF_BACKEND, ImageLimits, ModelInfo, check_model, lookup, notice,
                        thinking_level)
from .error_kinds import transport_failure
from .replycap import DEFAULT_MAX_REPLY_BYTES, refused_reply
from .retry import Failure, Retrier, Sleep
from .settings import FLAG, PER_MODEL, BackendSettings, Default, number, setting

NO_KEY_BACKENDS = "function, replay, hf and openai-chat with --base-url work without one"


def api_key(options: BackendOptions, backend: str, *variables: str) -> str:
    """The key given on the command line or in the vendor's usual variable; one clear line if there is none."""
    key = options.api_key or next((os.environ[v] for v in variables if os.environ.get(v)), None)
    if not key:
        raise MissingCredentials(f"{backend}: set {' or '.join(variables)} ({NO_KEY_BACKENDS})")
    return key


def parse_arguments(raw: str | dict | None) -> dict[str, Any] | None:
    """Tool arguments as a dict, or None when the model sent something that is not a JSON object."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def tool_call(id: str, name: str, raw: str | dict | None) -> ToolCall:
    """A neutral tool call; keeps the raw text so a malformed call can be shown back to the model."""
    text = raw if isinstance(raw, str) else json.dumps(raw or {})
    return ToolCall(id=id, name=name, arguments=parse_arguments(raw), raw_arguments=text)


def b64(image: ImagePart) -> str:
    return base64.b64encode(image.data).decode()


def data_url(image: ImagePart) -> str:
    return f"data:{image.mime_type};base64,{b64(image)}"


def system_text(messages: list[Message]) -> str:
    return "\n\n".join(m.text for m in messages if m.role == "system" and m.text)


def result_text(message: Message, image_note: str = "") -> str:
    """A tool result's text, never empty (APIs reject empty text); errors are marked as errors for every vendor."""
    ids = ", ".join(i.id for i in message.images)
    text = message.text or (f"image {ids}" if ids else "(no output)")
    if message.is_error and not text.lower().startswith("error"):
        text = f"error: {text}"
    if image_note and ids:
        text = f"{text}\n{image_note.format(ids=ids)}"
    return text


def parts_of(message: Message, text: Callable[[TextPart], Any], image: Callable[[ImagePart], Any]) -> list:
    return [text(p) if isinstance(p, TextPart) else image(p) for p in message.parts]


def json_schema_strict(schema: dict[str, Any]) -> bool:
    """Whether a schema meets OpenAI's strict mode (every object closed, every property required)."""
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(props):
            return False
        return all(json_schema_strict(p) for p in props.values())
    if "items" in schema:
        return json_schema_strict(schema["items"])
    return all(json_schema_strict(s) for key in ("anyOf", "oneOf") for s in schema.get(key, []))


TEMPERATURE = number(0, 2, none="send no temperature")


@dataclass(frozen=True)
class VendorSettings(BackendSettings):
    """What every hosted-API backend takes; a vendor's class adds its own."""

    temperature: float | None | Default = setting(
        PER_MODEL, TEMPERATURE,
        "sampling temperature; per model: what the catalogue says the model takes (docs/vendors.md)")
    native_final: bool = setting(True, FLAG, "the vendor's structured output for the final answer where it combines "
                                             "with tools; false: always the answer parser")
    max_reply_bytes: int = setting(DEFAULT_MAX_REPLY_BYTES, number(1024, whole=True, unit="bytes"),
                                   "a reply body past this fails at once instead of filling memory")
    model_check: bool = setting(True, FLAG, "refuse a model the catalogue does not know for this vendor; false: "
                                            "send it as written")


# --timeout on the flex tier when not given: OpenAI asks for 15 minutes (developers.openai.com/api/docs/guides/
# flex-processing, "increase default timeout to 15 minutes"), Google's flex answers within 1 to 15 minutes
# (ai.google.dev/gemini-api/docs/flex-inference)
FLEX_TIMEOUT = 900.0


def tier_timeout(options: BackendOptions) -> BackendOptions:
    """The options with a timeout: the user's where one was given (120 included), else the tier's default."""
    if options.timeout is not None:
        return options
    return replace(options, timeout=FLEX_TIMEOUT if options.service_tier == "flex" else DEFAULT_TIMEOUT)


class Refused(Exception):
    """The model declined, or a safety filter stopped it (a reply, not an error, on every vendor): the vendor's
    words. Read as the `refusal` kind: not re-asked, moved to the next --fallback-model."""


class RequestDeadline(TimeoutError):
    """A request that had no complete reply within `--timeout` seconds in all."""


class VendorBackend:
    """Skeleton of a hosted-API backend: build a request for a model, send it with retries, read the reply."""

    name: ClassVar[str]
    Settings: ClassVar[type[VendorSettings]] = VendorSettings  # what `--backend-option` this vendor takes
    default_model: ClassVar[str]
    truncated_stops: ClassVar[frozenset[str]] = frozenset()  # stop reasons of a reply cut at the output limit
    service_tiers: ClassVar[tuple[str, ...]] = ("standard", "flex")  # the `--service-tier` values the vendor has
    tier_note: ClassVar[str] = "flex: half price, slower"

    def __init__(self, options: BackendOptions, sleep: Sleep | None = None):
        if (options.service_tier or "standard") not in self.service_tiers:
            raise ValueError(f"{self.name}: --service-tier must be {' or '.join(self.service_tiers)} "
                             f"({self.tier_note}); got {options.service_tier!r}")
        self.options = tier_timeout(options)
        self.retrier = Retrier(options, self.classify_any, self.default_model, sleep=sleep)
        self.settings = self.Settings.of(options)
        self.user_temperature = self.settings.temperature is not PER_MODEL  # else each model's catalogue default
        self.temperature = 0.0 if self.settings.temperature is PER_MODEL else self.settings.temperature
        self.thinking = thinking_level(options.thinking)
        self.images = ImagePolicy(self.image_limits(), options.image_format, options.keep_images)
        self._client = self.new_client()  # now, so a missing key is reported before any work starts
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.retrier.where = f"{self.name} at {self.endpoint()}"
        if self.checks_models and self.settings.model_check:
            for model in self.retrier.models:  # refused (ModelRefused, exit 2) or one line per notice
                for line in check_model(model, self.vendor):
                    notice(line)

    @property
    def checks_models(self) -> bool:
        """Whether --model names one of this vendor's models (a local server behind openai-chat names its own)."""
        return True

    def endpoint(self) -> str:
        """The base URL requests go to: --base-url, or the SDK's default for the vendor."""
        client = self._client
        http_options = getattr(getattr(client, "_api_client", None), "_http_options", None)  # google-genai
        url = self.options.base_url or getattr(client, "base_url", None) or getattr(http_options, "base_url", "")
        return str(url or "?")

    @classmethod
    def from_options(cls, options: BackendOptions) -> VendorBackend:
        return cls(options)

    @property
    def model(self) -> str:
        return self.retrier.model

    @property
    def client(self) -> Any:
        """The SDK client for the running event loop: a connection pool cannot move to another loop."""
        loop = asyncio.get_running_loop()
        if self._client_loop is None:
            self._client_loop = loop
        elif self._client_loop is not loop:
            self._client, self._client_loop = self.new_client(), loop
        return self._client

    async def aclose(self) -> None:
        """Close the SDK's connection pool, if it belongs to this event loop (an older one's died with it)."""
        if self._client_loop in (None, asyncio.get_running_loop()):
            await self.close_client(self._client)

    async def __aenter__(self) -> VendorBackend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def new_client(self) -> Any:
        """The vendor SDK's async client, SDK retries off."""
        raise NotImplementedError

    async def close_client(self, client: Any) -> None:
        await client.close()

    async def complete(self, messages: list[Message], tools: list[ToolSchema], *,
                       final_schema: dict[str, Any] | None = None, max_output_tokens: int = 4096) -> Turn:
        """One round: the vendor request (rebuilt per model, since fallbacks may differ), retried, translated. A reply
        cut off at the output limit is asked again once with twice the limit; cut off again, it is an error of kind
        `truncated`, never an answer (the usage of every reply is kept: each was billed)."""
        messages, images = prepare_messages(messages, self.images)
        turn = await self._round(messages, tools, final_schema, max_output_tokens)
        billed = turn.usage
        if turn.stop_reason in self.truncated_stops:
            cut, limit = turn.stop_reason, 2 * max_output_tokens
            turn = await self._round(messages, tools, final_schema, limit)
            billed = billed + turn.usage
            if turn.stop_reason in self.truncated_stops:
                kind = ErrorKind.TRUNCATED
                error = BackendError(f"{self.retrier.where}: {self.model}: {kind}: the reply was cut off at the "
                                     f"output limit twice ({turn.stop_reason}, {limit} answer tokens the second "
                                     f"time) ({kind.hint})", kind)
                error.usage = billed  # type: ignore[attr-defined]  # billed all the same
                raise error
            turn.sent["truncated_retry"] = {"stop_reason": cut, "max_output_tokens": limit}
        turn.sent["images"] = images
        turn.usage = billed
        return turn

    async def _round(self, messages: list[Message], tools: list[ToolSchema], final_schema: dict[str, Any] | None,
                     max_output_tokens: int) -> Turn:
        """One request, retried by the policy, each attempt within the `--timeout` deadline, read into a Turn."""
        sent: dict[str, Any] = {}
        dropped: dict[str, Any] = {}

        async def attempt(model: str) -> Any:
            request, what = self.request(model, messages, tools, final_schema, max_output_tokens)
            sent.clear()
            sent.update(what)
            try:
                return await self.answered(model, request)
            except Exception as exc:
                if what.get("temperature") is None or not self.rejects_temperature(exc):
                    raise
                # Some models refuse any temperature; drop it for the rest of the run and say so in the trace.
                self.temperature = None
                dropped["temperature_rejected"] = str(exc)[:300]
                request, what = self.request(model, messages, tools, final_schema, max_output_tokens)
                sent.update(what)
                return await self.answered(model, request)

        response, notes = await self.retrier.run(attempt)
        turn = self.read(response)
        turn.model = turn.model or self.model
        turn.usage = self.mark_long(turn.usage, turn.model)
        turn.sent = {**sent, **dropped, **notes, **turn.sent}  # read() may add (narration)
        return turn

    @property
    def deadline(self) -> float:
        """Seconds one request may take in all, reply included: `--timeout`."""
        return self.options.timeout

    async def within_deadline(self, model: str, request: Any) -> Any:
        """`send`, cut at the deadline: the SDKs' timeouts are per read, so a server dripping a byte at a time would
        otherwise hold a request for ever."""
        with anyio.move_on_after(self.deadline) as scope:
            return await self.send(model, request)
        if scope.cancelled_caught:
            raise RequestDeadline(f"no complete reply within {self.deadline:g} s (--timeout)")
        raise AssertionError("unreachable")  # pragma: no cover

    async def answered(self, model: str, request: Any) -> Any:
        """The vendor's reply within the deadline, raised as `Refused` where the model declined to answer."""
        response = await self.within_deadline(model, request)
        if (words := self.refusal(response)) is not None:
            raise Refused(words)
        return response

    def refusal(self, response: Any) -> str | None:
        """The vendor's words where this reply is a refusal or a safety stop, else None."""
        return None

    def classify_any(self, exc: BaseException) -> Failure | None:
        """Our own deadline is a timeout like the SDKs' (retried), a reply over the byte cap or a redirect fails for
        good (another would be alike); anything else is the vendor's to read."""
        if isinstance(exc, RequestDeadline):
            return transport_failure(exc)
        if isinstance(exc, Refused):
            return Failure(ErrorKind.REFUSAL, str(exc))
        if refused := refused_reply(exc):
            return Failure(ErrorKind.BACKEND, str(refused))
        return self.classify(exc)

    def info(self, model: str) -> ModelInfo:
        """What the catalogue knows `model` accepts (its family's rules for a model it does not list)."""
        return lookup(model, self.vendor)

    @property
    def vendor(self) -> str:
        return VENDOR_OF_BACKEND.get(self.name, self.name)

    def image_limits(self) -> ImageLimits:
        """The documented image limits of this backend's vendor."""
        return self.info(self.options.model or self.default_model).images or lookup(self.default_model).images

    def temperature_for(self, model: str) -> float | None:
        """The user's temperature if given (None: send none), else what the model accepts by default."""
        if self.user_temperature or self.temperature is None:
            return self.temperature
        return self.info(model).default_temperature

    def output_budget(self, model: str, max_output_tokens: int, thinking: str | None = None) -> int:
        """The answer's token budget plus room for thinking (the vendor counts it as output), also for a model that
        thinks by default when `--thinking` is not given (its default effort is about 'medium'); `thinking` overrides
        the level (a request that had to switch thinking off)."""
        info = self.info(model)
        level = thinking or self.thinking or ("medium" if info.thinks_by_default else None)
        return max_output_tokens + (THINKING_BUDGET[level] if level and info.thinking else 0)

    def mark_long(self, usage: Usage, model: str) -> Usage:
        """One request's usage, marked as wholly long-context (`Usage.long`) when its prompt is over the threshold
        of the model that answered: the vendor bills all of it at the long-context rate."""
        price = self.info(model).price_for(self.service_tier or "")
        if price is None or price.long_above is None or usage.input_tokens <= price.long_above:
            return usage
        return replace(usage, long=replace(usage, long=None))

    @property
    def service_tier(self) -> str | None:
        """`--service-tier` where it changes the request: 'flex' (None: the vendor's standard tier)."""
        tier = self.options.service_tier
        return None if tier in (None, "standard") else tier

    def prompt_cache_key(self, messages: list[Message]) -> str:
        """One key per conversation (system prompt and question), so each round is routed to the cache holding its
        prefix (OpenAI `prompt_cache_key`)."""
        digest = hashlib.sha256()
        for m in messages:
            if m.role in ("system", "user"):
                digest.update(m.role.encode())
                for part in m.parts:
                    digest.update(part.text.encode() if isinstance(part, TextPart) else part.data)
            if m.role == "user":
                break
        return f"trompe-{digest.hexdigest()[:24]}"

    def reply(self, text: str, calls: list[ToolCall], payload: Any = None) -> Message:
        """The assistant message of a reply; the vendor's own `payload` is tagged so only this backend echoes it."""
        vendor = None if payload is None else {"backend": self.name, "payload": payload}
        return Message("assistant", [TextPart(text)] if text else [], tool_calls=calls, vendor=vendor)

    def echo(self, message: Message) -> Any:
        """This backend's payload on an assistant message, or None (then the neutral parts are translated)."""
        vendor = message.vendor
        if isinstance(vendor, dict) and vendor.get("backend") == self.name:
            return vendor["payload"]
        return None

    def native_final(self, final_schema: dict[str, Any] | None, possible: bool) -> bool:
        """Native structured output, where the vendor can combine it with tools here and the user did not opt out."""
        return bool(final_schema) and possible and self.settings.native_final

    def rejects_temperature(self, exc: Exception) -> bool:
        """A 400 whose message blames the temperature parameter."""
        return getattr(exc, "status_code", getattr(exc, "code", None)) == 400 and "temperature" in str(exc)

    def request(self, model: str, messages: list[Message], tools: list[ToolSchema],
                final_schema: dict[str, Any] | None, max_output_tokens: int) -> tuple[Any, dict[str, Any]]:
        """The vendor request for `model`, and the settings to record in `Turn.sent`."""
        raise NotImplementedError

    async def send(self, model: str, request: Any) -> Any:
        raise NotImplementedError

    def read(self, response: Any) -> Turn:
        raise NotImplementedError

    def classify(self, exc: BaseException) -> Failure | None:
        raise NotImplementedError
