"""A trompe backend over an Inspect model, so the illusion agent runs unchanged on any Inspect provider.

Every request goes through Inspect's `Model.generate` (its retries, rate limits, cache and log), with trompe's
tools declared as `ToolInfo` only: the illusion agent's own loop runs them on trompe's MCP server.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    Model,
    ModelOutput,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolCallError

from trompe_agents.backends.vendor import result_text
from trompe_agents.messages import ImagePart, Message, TextPart, ToolCall, ToolSchema, Turn, Usage

from .schemas import tool_info


def data_url(image: ImagePart) -> str:
    return f"data:{image.mime_type};base64,{base64.b64encode(image.data).decode()}"


def content_of(message: Message, label_images: bool) -> list[Content]:
    """A message's parts as Inspect content; a tool's images follow their id, so the model can name them."""
    content: list[Content] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append(ContentText(text=part.text))
        else:
            if label_images:
                content.append(ContentText(text=f"{part.id}:"))
            content.append(ContentImage(image=data_url(part)))
    return content


def to_inspect(messages: list[Message]) -> list[ChatMessage]:
    """trompe's neutral messages as Inspect chat messages; an assistant turn goes back as Inspect gave it."""
    out: list[ChatMessage] = []
    for m in messages:
        if m.role == "system":
            out.append(ChatMessageSystem(content=m.text))
        elif m.role == "user":
            out.append(ChatMessageUser(content=content_of(m, label_images=False)))
        elif m.role == "assistant":
            out.append(m.vendor if isinstance(m.vendor, ChatMessageAssistant) else ChatMessageAssistant(
                content=m.text, tool_calls=[InspectToolCall(c.id, c.name, c.arguments or {}) for c in m.tool_calls]
                or None))
        else:
            text = result_text(m)
            content = [ContentText(text=text), *content_of(Message("tool", m.images), label_images=True)]
            out.append(ChatMessageTool(content=content, tool_call_id=m.tool_call_id, function=m.tool_name,
                                       error=ToolCallError("unknown", text) if m.is_error else None))
    return out


def to_turn(output: ModelOutput, model: str) -> Turn:
    """Inspect's output as one trompe turn; a tool call whose arguments did not parse keeps them as raw text."""
    message = output.message
    calls = [ToolCall(c.id, c.function, None if c.parse_error else dict(c.arguments),
                      json.dumps(c.arguments) if not c.parse_error else str(c.parse_error))
             for c in message.tool_calls or []]
    usage = output.usage
    counted = Usage() if usage is None else Usage(
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
        reasoning_tokens=usage.reasoning_tokens or 0, cached_tokens=usage.input_tokens_cache_read or 0,
        cache_write_tokens=usage.input_tokens_cache_write or 0)
    return Turn(Message("assistant", [TextPart(message.text)] if message.text else [], calls, vendor=message),
                counted, output.model or model, output.stop_reason)


class InspectBackend:
    """trompe's Backend protocol over one Inspect model; keeps the last conversation for the sample's log."""

    name = "inspect"

    def __init__(self, model: Model):
        self._model = model
        self.model = str(model)
        self.conversation: list[ChatMessage] = []  # the last request and its reply: shown in Inspect's viewer

    async def complete(self, messages: list[Message], tools: list[ToolSchema], *,
                       final_schema: dict[str, Any] | None = None, max_output_tokens: int = 4096) -> Turn:
        """One turn; the answer schema is in the system prompt already (trompe reads the JSON from the text)."""
        chat = to_inspect(messages)
        output = await self._model.generate(chat, tools=[tool_info(t) for t in tools])
        if output.error:
            raise RuntimeError(f"{self.model}: {output.error}")
        self.conversation = [*chat, output.message]
        return to_turn(output, self.model)
