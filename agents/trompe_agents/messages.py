"""One neutral message model that every backend translates to and from its vendor's wire format."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class TextPart:
    text: str


@dataclass
class ImagePart:
    """Image bytes with the registry id they came from ('original', 'img_003'); PNG unless said otherwise."""

    id: str
    data: bytes
    mime_type: str = "image/png"


Part = TextPart | ImagePart


@dataclass
class ToolCall:
    """A model's request to run a tool; `arguments` is None when the model sent unparseable JSON."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""


@dataclass
class Message:
    """system / user (text, images) / assistant (text, tool calls) / tool (one result: text, images)."""

    role: Role
    parts: list[Part] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None  # role == "tool": which call this answers
    tool_name: str | None = None  # role == "tool": the tool's name (Gemini needs it)
    is_error: bool = False  # role == "tool": the tool failed
    vendor: Any = None  # assistant: the vendor's own payload to echo back unchanged (e.g. thought signatures)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        return [p for p in self.parts if isinstance(p, ImagePart)]


@dataclass
class Usage:
    """Token counts as the vendor reports them; None where it reports nothing."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0  # input tokens read from the vendor's prompt cache (part of input_tokens)
    image_tokens: int | None = None
    cache_write_tokens: int = 0  # input tokens written to the prompt cache (Claude; part of input_tokens)
    # The part of these counts sent in requests over their model's long-context price threshold (billed at its
    # long-context rate as a whole: costs.py); None where no request crossed one.
    long: Usage | None = None

    def __post_init__(self):
        if isinstance(self.long, dict):  # read back from a record
            self.long = Usage(**self.long)

    def __add__(self, other: Usage) -> Usage:
        merged = {}
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            merged[f.name] = a if b is None else b if a is None else a + b
        return Usage(**merged)

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens + self.reasoning_tokens


@dataclass
class ToolSchema:
    """What the model is shown of a tool: name, description and JSON schema (without `session`)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class Turn:
    """One backend reply: the assistant message, its usage, and what was actually sent and used."""

    message: Message
    usage: Usage
    model: str
    stop_reason: str = ""
    sent: dict[str, Any] = field(default_factory=dict)  # request settings actually sent (temperature, ...)
