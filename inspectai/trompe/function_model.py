"""`--model trompe_function/MODULE:FUNCTION`: a Python function plays the model in Inspect, as trompe's function
backend does for `illusion-agent`, so an eval runs with no key and no network (Inspect's mockllm counts tokens with
tiktoken, which downloads its tables, and its fixed reply answers nothing).

The function is the function backend's (`def decide(messages, tools)`, trompe's messages and tool schemas; it
returns text, a dict answer or tool calls); Inspect's conversation is turned back into trompe's messages for it,
and it is billed zero tokens, as the function backend reports.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from pathlib import Path
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolChoice, ToolInfo

from trompe_agents.backends.function import FunctionBackend, load_function
from trompe_agents.messages import ImagePart, Message, Part, TextPart, ToolCall, ToolSchema


def image_bytes(image: str) -> tuple[bytes, str]:
    """A ContentImage's bytes and type: a data URL decoded, or the file it names read."""
    if image.startswith("data:"):
        header, _, payload = image.partition(",")
        return base64.b64decode(payload), header[5:].split(";")[0] or "image/png"
    return Path(image).read_bytes(), mimetypes.guess_type(image)[0] or "image/png"


def parts_of(message: ChatMessage) -> list[Part]:
    """A message's content as trompe parts; an image keeps the id the text before it names ("img_001:")."""
    if isinstance(message.content, str):
        return [TextPart(message.content)] if message.content else []
    parts: list[Part] = []
    for item in message.content:
        if isinstance(item, ContentText):
            parts.append(TextPart(item.text))
        elif isinstance(item, ContentImage):
            label = parts[-1].text if parts and isinstance(parts[-1], TextPart) else ""
            named = label.endswith(":") and " " not in label.strip()
            if named:
                parts.pop()
            data, mime = image_bytes(item.image)
            parts.append(ImagePart(label.strip()[:-1] if named else "original", data, mime))
    return parts


def from_inspect(messages: list[ChatMessage]) -> list[Message]:
    """Inspect's conversation as trompe's messages (backend.to_inspect read backwards)."""
    out: list[Message] = []
    for m in messages:
        if isinstance(m, ChatMessageAssistant):
            calls = [ToolCall(c.id, c.function, dict(c.arguments), json.dumps(c.arguments)) for c in m.tool_calls or []]
            out.append(Message("assistant", [TextPart(m.text)] if m.text else [], calls))
        elif isinstance(m, ChatMessageTool):
            out.append(Message("tool", parts_of(m), tool_call_id=m.tool_call_id, tool_name=m.function,
                               is_error=m.error is not None))
        else:
            out.append(Message("user" if isinstance(m, ChatMessageUser) else "system", parts_of(m)))
    return out


@modelapi(name="trompe_function")
class FunctionModel(ModelAPI):
    """A Python function as an Inspect model: `--model trompe_function/mymodel:decide`."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        self.backend = FunctionBackend(load_function(model_name), model_name)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        schemas = [ToolSchema(t.name, t.description, t.parameters.model_dump(exclude_none=True)) for t in tools]
        turn = await self.backend.complete(from_inspect(input), schemas)
        calls = [InspectToolCall(c.id, c.name, c.arguments or {}) for c in turn.message.tool_calls]
        message = ChatMessageAssistant(content=turn.message.text, tool_calls=calls or None, model=self.model_name,
                                       source="generate")
        return ModelOutput(model=self.model_name, usage=ModelUsage(),  # a function reads no tokens
                           choices=[ChatCompletionChoice(message=message,
                                                         stop_reason="tool_calls" if calls else "stop")])
