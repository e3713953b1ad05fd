"""The backend contract: turn neutral messages into one assistant turn from some model."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..messages import Message, ToolSchema, Turn
from .catalogue import DEFAULT_KEEP_ROUNDS


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


class BackendOptions:
    """What a user can say about a backend on the command line; each backend reads what applies."""

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 max_retries: int = 4, retry_cap: float = 60.0, timeout: float = DEFAULT_TIMEOUT,
                 fallback_models: list[str] | None = None, record: str | None = None,
                 extra: dict[str, Any] | None = None, thinking: str | None = None,
                 image_format: str = "auto", keep_images: int | None = DEFAULT_KEEP_ROUNDS,
                 service_tier: str | None = None):
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.max_retries = max_retries
        self.retry_cap = retry_cap  # longest retry-after we honour, seconds
        self.timeout = timeout
        self.fallback_models = fallback_models or []
        self.record = record  # cassette path: record every request/response of this backend
        self.extra = extra or {}
        self.thinking = thinking  # off, low, medium, high; None: the vendor's default
        self.image_format = image_format  # auto, png, jpeg, webp
        self.keep_images = keep_images  # rounds whose images are re-sent; None: every image every round
        self.service_tier = service_tier  # standard or flex (OpenAI, Gemini: half price, slower); None: standard
