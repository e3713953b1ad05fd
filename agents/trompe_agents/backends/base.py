"""The backend contract: turn neutral messages into one assistant turn from some model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..messages import Message, ToolSchema, Turn
from .catalogue import DEFAULT_KEEP_ROUNDS
from .settings import BackendSettings


class BackendError(RuntimeError):
    """A backend failed for good (after retries); the message says what the user can do, `kind` what failed."""

    def __init__(self, message: str, kind: str = "backend"):
        super().__init__(message)
        self.kind = kind  # auth, not_found, connection, quota, rate_limit, ... (failures.ErrorKind)


class MissingCredentials(BackendError):
    """No API key: the message names the variable and the backends that need none."""


class QuotaExhausted(BackendError):
    """The account is out of quota (not a rate limit): retrying the same model will not help."""


@runtime_checkable
class Backend(Protocol):
    """A model behind some API. `complete` is called once per agent round."""

    name: str
    model: str

    async def complete(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        final_schema: dict[str, Any] | None = None,
        max_output_tokens: int = 4096,
    ) -> Turn:
        """One model turn: text and/or tool calls. `final_schema` is the JSON schema of a final answer."""
        ...


DEFAULT_TIMEOUT = 120.0  # seconds one request may take when --timeout is not given (flex: backends/vendor.py)


@dataclass(frozen=True)
class BackendOptions:
    """What a user can say about a backend on the command line, the same for every backend; `settings` holds the
    chosen backend's own (`--backend-option`), typed by the class it registers (settings.py)."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    max_retries: int = 4
    retry_cap: float = 60.0  # longest retry-after we honour, seconds
    timeout: float | None = None  # seconds per request; None: not given, the tier's default (vendor.tier_timeout)
    fallback_models: tuple[str, ...] = ()
    record: str | None = None  # cassette path: record every request/response of this backend
    settings: BackendSettings | None = None  # None: the backend's defaults
    thinking: str | None = None  # off, low, medium, high; None: the vendor's default
    image_format: str = "auto"  # auto, png, jpeg, webp
    keep_images: int | None = DEFAULT_KEEP_ROUNDS  # rounds whose images are re-sent; None: every image every round
    service_tier: str | None = None  # standard or flex (OpenAI, Gemini: half price, slower); None: standard

    def __post_init__(self) -> None:
        object.__setattr__(self, "fallback_models", tuple(self.fallback_models or ()))  # a list from Python
