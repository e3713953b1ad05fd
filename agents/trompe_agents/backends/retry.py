"""One retry policy for every vendor backend, so rate limits, outages and empty quotas behave the same everywhere.

The SDKs' own retries are switched off (`max_retries=0`); each backend supplies a `classify(exc)` that says what
a vendor error means, and `Retrier.run` decides: wait and retry (429, 5xx, timeouts, connection errors; the
server's retry-after honoured up to `retry_cap`), switch to the next `--fallback-model` (quota exhausted, or
still failing after `max_retries` retries), or give up with a `BackendError` / `QuotaExhausted` that says why.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from ..failures import Action, ErrorKind
from .base import BackendError, BackendOptions, QuotaExhausted

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[Any]]

BASE_DELAY = 1.0  # seconds before the first retry when the server names no delay


@dataclass
class Failure:
    """What a vendor error means for us: its cause (`kind`) and so what to do (`action`), and why, in words."""

    kind: ErrorKind  # what failed: auth, not_found, quota, rate_limit, ... (failures.py)
    reason: str
    retry_after: float | None = None  # seconds the server asked us to wait (kept only when the action is retry)

    def __post_init__(self):
        self.kind = ErrorKind(self.kind)
        if self.action is not Action.RETRY:
            self.retry_after = None

    @property
    def action(self) -> Action:
        """retry (transient), switch (to a --fallback-model: out of quota or credit) or fatal (don't retry)."""
        return self.kind.action


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # unreadable: fall back to our own backoff
    return max(0.0, when.timestamp() - time.time())


def parse_duration(text: str | None) -> float | None:
    """A protobuf Duration string ('1s', '0.5s', '1.250s') in seconds; Gemini's RetryInfo.retryDelay uses it."""
    match = re.fullmatch(r"\s*([0-9.]+)s\s*", text) if text else None
    return float(match.group(1)) if match else None


class Retrier:
    """Runs one request with retries and model fallback; remembers the model in use across turns."""

    def __init__(self, options: BackendOptions, classify: Callable[[BaseException], Failure | None],
                 default_model: str, sleep: Sleep | None = None, rng: Callable[[], float] = random.random,
                 where: str = ""):
        self.where = where  # "vendor at URL", so a failure names both
        self.models = [options.model or default_model, *options.fallback_models]
        self.index = 0
        self.max_retries = max(0, options.max_retries)
        self.retry_cap = options.retry_cap
        self.classify = classify
        self.sleep = anyio.sleep if sleep is None else sleep
        self.rng = rng

    @property
    def model(self) -> str:
        return self.models[self.index]

    def backoff(self, attempt: int, asked: float | None) -> float:
        """The server's delay if it named one, else exponential backoff with full jitter, capped."""
        if asked is not None:
            return asked
        return min(self.retry_cap, BASE_DELAY * 2**attempt) * (0.5 + self.rng() / 2)

    async def run(self, call: Callable[[str], Awaitable[T]]) -> tuple[T, dict[str, Any]]:
        """`call(model)` until it succeeds; returns its result and notes for `Turn.sent` (retries, switches)."""
        retries: list[dict[str, Any]] = []
        switches: list[dict[str, Any]] = []
        attempt = 0
        while True:
            try:
                result = await call(self.model)
            except Exception as exc:
                failure = self.classify(exc)
                if failure is None or failure.action is Action.FATAL:
                    raise self.error(failure, failure.reason if failure else str(exc)) from exc
                too_long = failure.retry_after is not None and failure.retry_after > self.retry_cap
                if failure.action is Action.RETRY and attempt < self.max_retries and not too_long:
                    wait = self.backoff(attempt, failure.retry_after)
                    retries.append({"model": self.model, "reason": failure.reason, "wait_s": round(wait, 3)})
                    attempt += 1
                    await self.sleep(wait)
                    continue
                if failure.action is Action.SWITCH:
                    why = failure.reason
                elif too_long:
                    why = f"asked to wait {failure.retry_after:g}s, more than the retry cap {self.retry_cap:g}s"
                else:
                    why = f"still failing after {attempt + 1} attempts: {failure.reason}"
                if self.index + 1 >= len(self.models):
                    raise self.error(failure, why) from exc
                switches.append({"from": self.model, "to": self.models[self.index + 1],
                                 "reason": f"{failure.kind}: {why}"})
                self.index += 1
                attempt = 0
                continue
            notes: dict[str, Any] = {}
            if retries:
                notes["retries"] = retries
            if switches:
                notes["model_switch"] = switches
            return result, notes

    def error(self, failure: Failure | None, why: str) -> BackendError:
        """The one-line error: where, which model, what failed and what to do about it."""
        kind = failure.kind if failure else ErrorKind.BACKEND
        where = f"{self.where}: " if self.where else ""
        hint = kind.hint
        if kind.fallback_helps and len(self.models) == 1:
            hint += ", or add --fallback-model to switch models"
        text = f"{where}{self.model}: {kind}: {why}"
        error = QuotaExhausted if kind in (ErrorKind.QUOTA, ErrorKind.CREDIT) else BackendError
        return error(f"{text} ({hint})" if hint else text, kind)
