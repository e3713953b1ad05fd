"""`claude`: Anthropic's Messages API; tool-result images go back natively inside `tool_result` blocks.

Temperature: `messages.create` has no temperature parameter, so it travels in `extra_body`, and only where it is
accepted: API version 2026-10-21 (the SDK's default) answers 400 to any sampling parameter on every model, and
Sonnet 5 and later refuse one on any version; so 0 goes only with `--backend-option anthropic_version=2023-06-01` to a
model the catalogue says takes it. The `temperature` setting forces a value (or none).
A model that still refuses it answers 400; the backend then drops it for the rest of the run and records that in
`Turn.sent`. The `anthropic_version` setting overrides the API version header.

Prompt caching: `cache_control` marks the end of the system prompt and of the tool list. When every image is kept
(`--keep-images all`, the default here) each request is the previous one plus a round, so the request also carries
the top-level (automatic) `cache_control`, which moves the breakpoint to its last block: the whole previous request
is read from the cache (platform.claude.com/docs/en/build-with-claude/prompt-caching, "Automatic caching"). The
block where the previous request ended is marked too (the fourth breakpoint), so a round that adds more than the
20 blocks the cache looks back over (many parallel tool calls) still reads it. With
elision an older image turns into a stub each round, so only the stable part is marked: the first user turn (the
question and its images) is the third breakpoint. `--backend-option prompt_cache=false` turns caching off.

Thinking (`--thinking`): adaptive models get `thinking: adaptive` and `output_config.effort`, older ones a
`budget_tokens`; `max_tokens` grows by the thinking budget either way. `off` is the model's own lowest setting
(models.toml `thinking_off`): `disabled`, `between_tools` on Sonnet 5.5 (where `disabled` is a 400), or the lowest
effort on models that always think. Sonnet 5.5 and Haiku 5.5 get `thinking.display: summarized`, so the narration
they write between tool calls (thinking blocks) reaches the trace as `sent.narration`. Thinking blocks go back
unchanged while their prefix is (preserved thinking, `valid_thinking`): those after an image that turned into a
stub are left out, or the API would answer 400. A `stop_reason: "refusal"` is the `refusal` kind with its words.

`--service-tier batch` sends every request through Message Batches (anthropic_batches.py) at half price: requests
within `batch_window` seconds (default 2) share a batch, polled every `batch_poll` seconds (default 30); a request
then waits up to 24 hours. It fits single-request work (`--no-tools` baselines, router classification, SEVEX target
inference) only: a request with tools, where each ReAct round would wait for its own batch, is refused in one line
(`invalid_request`, nothing sent).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import anthropic
from trompe_kernel.hookspecs import hookimpl

from ..failures import ErrorKind
from ..messages import ImagePart, Message, TextPart, ToolSchema, Turn, Usage
from .model_images import prepare_messages
from .anthropic_batches import BATCH_WAIT, BATCH_WITH_TOOLS, Batcher, BatchResultError
from .base import BackendError, BackendOptions
from .catalogue import THINKING_BUDGET, ModelInfo, default_model, nearest_effort
from .replycap import client_settings
from .retry import Failure, Sleep
from .settings import FLAG, number, setting, text
from .error_kinds import anthropic_failure, transport_failure
from .vendor import VendorBackend, VendorSettings, api_key, b64, json_schema_strict, parts_of, result_text, system_text
from .vendor import tool_call as neutral_call


CACHE = {"cache_control": {"type": "ephemeral"}}
SAMPLING_REMOVED = "2026-10-21"  # the first API version that refuses temperature, top_p and top_k


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


def _thinking(blocks: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The thinking and redacted_thinking blocks of an assistant turn as Claude sent it."""
    return [b for b in blocks or [] if b.get("type") in ("thinking", "redacted_thinking")]


def _previous_end(turns: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last block of the last user turn an assistant turn follows: where the previous request ended."""
    ends = [t["content"][-1] for t, after in zip(turns, turns[1:])
            if t["role"] == "user" and after["role"] == "assistant" and t["content"]]
    return ends[-1] if ends else None


@dataclass(frozen=True)
class ClaudeSettings(VendorSettings):
    """Claude's own settings, on top of every vendor's."""

    prompt_cache: bool = setting(True, FLAG, "`cache_control` breakpoints (false: nothing cached)")
    anthropic_version: str | None = setting(None, text(what="a date YYYY-MM-DD", pattern=r"\d{4}-\d{2}-\d{2}"),
                                            "the `anthropic-version` header (2023-06-01 still takes a temperature)",
                                            shown="the SDK's")
    batch_window: float = setting(2.0, number(0, unit="seconds"),
                                  "`--service-tier batch`: requests made within this share one batch")
    batch_poll: float = setting(30.0, number(0, unit="seconds"), "`--service-tier batch`: how often a batch is polled")


class ClaudeBackend(VendorBackend):
    """Claude through the official async SDK, with our retry policy instead of the SDK's."""

    name = "claude"
    Settings = ClaudeSettings
    default_model = default_model("claude")
    # cut at the output limit, or at the context window (platform.claude.com/docs/en/api/handling-stop-reasons)
    truncated_stops = frozenset({"max_tokens", "model_context_window_exceeded"})

    service_tiers = ("standard", "batch")
    tier_note = "Anthropic offers no flex tier; batch: Message Batches, half price, answered within 24 hours"

    def __init__(self, options: BackendOptions, sleep: Sleep | None = None):
        settings = ClaudeSettings.of(options)
        self.version = settings.anthropic_version
        self.batcher = Batcher(window=settings.batch_window, poll=settings.batch_poll) \
            if options.service_tier == "batch" else None
        super().__init__(options, sleep)

    async def complete(self, messages: list[Message], tools: list[ToolSchema], **kwargs: Any) -> Turn:
        """A round; on the batch tier only one without tools (a ReAct round would wait for a batch each time)."""
        if self.batcher is not None and tools:
            raise BackendError(f"{self.name}: {BATCH_WITH_TOOLS}", ErrorKind.INVALID_REQUEST)
        messages, dropped = self.valid_thinking(messages)
        turn = await super().complete(messages, tools, **kwargs)
        if dropped:
            turn.sent["thinking_dropped"] = dropped
        return turn

    def valid_thinking(self, messages: list[Message]) -> tuple[list[Message], int]:
        """The history with every thinking block whose prefix changed since it was produced left out, with all
        thinking after it (preserved thinking: platform.claude.com/docs/en/build-with-claude/preserved-thinking;
        sent back, such a block is a 400). Only an elided image changes a prefix (`--keep-images N`, or a request
        over the vendor's image limits): it turns into a stub. The request before each assistant turn is rebuilt as
        it was sent then and compared with how it is sent now; from the first that differs on, the thinking blocks
        are dropped (and counted in the trace)."""
        thinks = [i for i, m in enumerate(messages) if m.role == "assistant" and _thinking(self.echo(m))]
        if not thinks:
            return messages, 0
        now, done = prepare_messages(messages, self.images)
        if not done["images_elided"]:  # nothing stubbed now, so nothing was then: every prefix is as it was
            return messages, 0
        first = next((i for i in thinks if prepare_messages(messages[:i], self.images)[0] != now[:i]), None)
        if first is None:
            return messages, 0
        out, dropped = list(messages), 0
        for i in thinks:
            if i >= first:
                echo = self.echo(messages[i])
                dropped += len(_thinking(echo))
                kept = [b for b in echo if b not in _thinking(echo)]
                out[i] = replace(messages[i], vendor={"backend": self.name, "payload": kept})
        return out, dropped

    @property
    def deadline(self) -> float:
        """A batched request waits for its batch to end (within 24 hours), the others `--timeout`."""
        if self.batcher is None:
            return super().deadline
        return BATCH_WAIT + self.batcher.window + self.batcher.poll + self.options.timeout

    def new_client(self) -> anthropic.AsyncAnthropic:
        # Our own http client, as in openai_responses.make_client: safe to garbage-collect after its loop closed.
        return anthropic.AsyncAnthropic(
            api_key=api_key(self.options, self.name, "ANTHROPIC_API_KEY"), base_url=self.options.base_url,
            max_retries=0, timeout=self.options.timeout,
            http_client=anthropic.DefaultAsyncHttpxClient(**client_settings(self.settings.max_reply_bytes)),
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
        info = self.info(model)
        max_tokens = self.output_budget(model, max_output_tokens)
        request: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": self.to_messages(messages)}
        cache = ClaudeSettings.of(self.options).prompt_cache
        if system := system_text(messages):
            request["system"] = [{"type": "text", "text": system, **(CACHE if cache else {})}]
        if tools:
            request["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                                for t in tools]
            if cache:
                request["tools"][-1].update(CACHE)
        rolling = cache and self.images.keep_rounds is None
        if rolling:
            request.update(CACHE)  # automatic: the breakpoint follows the conversation's last block
            if previous := _previous_end(request["messages"]):
                previous.update(CACHE)  # where the last request's breakpoint was: hit even past the 20-block lookback
        elif cache and request["messages"] and request["messages"][0]["content"]:
            request["messages"][0]["content"][-1].update(CACHE)
        output: dict[str, Any] = {}
        native = self.native_final(final_schema, json_schema_strict(final_schema or {}))
        if native:
            output["format"] = {"type": "json_schema", "schema": final_schema}
        thinking = self.thinking_request(info, request, output)
        temperature = None if thinking.get("type") not in (None, "disabled") else self.temperature_for(model)
        if output:
            request["output_config"] = output
        if temperature is not None:
            request["extra_body"] = {"temperature": temperature}
        sent = {"model": model, "max_tokens": max_tokens, "temperature": temperature,
                "temperature_via": "extra_body" if temperature is not None else "not sent",
                "final_format": "native" if native else "parser", "prompt_cache": cache,
                **({"cache_breakpoint": "rolling" if rolling else "stable prefix"} if cache else {}),
                **({"thinking": thinking, "effort": output.get("effort")} if thinking else {})}
        if self.version:
            sent["anthropic_version"] = self.version
        if self.batcher is not None:
            sent["service_tier"] = "batch"
        return request, sent

    def temperature_for(self, model: str) -> float | None:
        """None under API versions that refuse sampling parameters, unless the user asked for one."""
        if not self.user_temperature and (self.version or SAMPLING_REMOVED) >= SAMPLING_REMOVED:
            return None
        return super().temperature_for(model)

    def thinking_request(self, info: ModelInfo, request: dict[str, Any], output: dict[str, Any]) -> dict[str, Any]:
        """`--thinking` for this model: adaptive thinking with an effort, the model's own `off` type
        (`disabled`, or `between_tools` on Sonnet 5.5, at effort low), or a budget on older models. A model whose
        thinking text is omitted by default gets `display` so its narration reaches the trace, asked or not."""
        level = self.thinking
        display = info.thinking_display if info.status != "unknown" else ""  # unasked: only where we know it
        if info.thinking is None or (level is None and not display):
            return {}
        if info.thinking == "budget":
            if level in ("off", None):
                return {}
            thinking = {"type": "enabled", "budget_tokens": THINKING_BUDGET[level]}
        elif level == "off" and info.off_with_json_tools and request.get("tools") and "format" in output:
            # Haiku 5.5's prompting guide: thinking off with a JSON output format skips tool calls it needs
            thinking = {"type": info.off_with_json_tools, **({"display": display} if display else {})}
            output["effort"] = nearest_effort(info, "low")
        elif level == "off" and info.thinking_off:
            thinking = {"type": info.thinking_off}
            if info.thinking_off == "between_tools":
                output["effort"] = nearest_effort(info, "low")  # between_tools takes low, medium or high
        else:  # adaptive; a model that always thinks gets the lowest effort for "off"
            thinking = {"type": "adaptive", **({"display": display} if display else {})}
            if level is not None:
                output["effort"] = nearest_effort(info, level)
        request["thinking"] = thinking
        return thinking

    async def send(self, model: str, request: dict[str, Any]) -> Any:
        if self.batcher is not None:  # a batch request's params are the body itself: extra_body merged in
            params = {k: v for k, v in request.items() if k != "extra_body"} | request.get("extra_body", {})
            return await self.batcher.create(self.client, params)
        return await self.client.messages.create(**request)

    def read(self, response: Any) -> Turn:
        text = "".join(b.text for b in response.content if b.type == "text")
        calls = [neutral_call(b.id, b.name, b.input) for b in response.content if b.type == "tool_use"]
        u = response.usage
        thinking = u.output_tokens_details.thinking_tokens if u.output_tokens_details else 0
        cached, written = u.cache_read_input_tokens or 0, u.cache_creation_input_tokens or 0
        usage = Usage(input_tokens=u.input_tokens + cached + written, output_tokens=u.output_tokens - thinking,
                      reasoning_tokens=thinking, cached_tokens=cached, cache_write_tokens=written)
        message = self.reply(text, calls, [b.model_dump(mode="json", exclude_none=True, by_alias=True)
                                           for b in response.content])
        turn = Turn(message, usage, model=response.model, stop_reason=response.stop_reason or "")
        # Sonnet 5.5 narrates between tool calls in thinking blocks; their summary is the trace's `narration`
        if narration := "\n\n".join(b.thinking for b in response.content if b.type == "thinking" and b.thinking):
            turn.sent["narration"] = narration
        return turn

    def refusal(self, response: Any) -> str | None:
        """`stop_reason: "refusal"` with its stop_details and any text before it (platform.claude.com/docs/en/
        test-and-evaluate/strengthen-guardrails/handle-streaming-refusals)."""
        if response.stop_reason != "refusal":
            return None
        details = getattr(response, "stop_details", None)
        said = "".join(b.text for b in response.content if b.type == "text")
        words = [f"stop_reason refusal ({details.category})" if details and getattr(details, "category", None)
                 else "stop_reason refusal", getattr(details, "explanation", None) or "",
                 f"partial reply: {said}" if said else ""]
        return ": ".join(w for w in words if w)

    def classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, BatchResultError):
            return anthropic_failure(exc.status_code, exc.body, {})
        if isinstance(exc, anthropic.APIStatusError):
            return anthropic_failure(exc.status_code, exc.body, exc.response.headers)
        if isinstance(exc, anthropic.APIConnectionError):  # includes timeouts
            return transport_failure(exc)
        return None


@hookimpl
def register_backends(register):
    register("claude", ClaudeBackend.from_options, settings=ClaudeSettings)
