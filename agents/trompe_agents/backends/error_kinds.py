"""What a vendor error means, read from the vendors' documented error bodies and the real ones users report.

Each reader returns a `Failure` whose kind (failures.ErrorKind: auth, permission, not_found, invalid_request,
rate_limit, quota, credit, overloaded, server, timeout, connection) decides what the retry loop does and the
hint the user sees.
Sources: docs.claude.com/en/api/errors, platform.openai.com/docs/guides/error-codes,
ai.google.dev/gemini-api/docs/troubleshooting; the reported bodies are cited in testing/fake_vendors.py.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

from ..failures import ErrorKind
from .retry import Failure, parse_duration, retry_after


def status_kind(status: int | None) -> ErrorKind:
    """The error kind an HTTP status means when the body says nothing more specific."""
    if status in (401,):
        return ErrorKind.AUTH
    if status == 403:
        return ErrorKind.PERMISSION
    if status == 404:
        return ErrorKind.NOT_FOUND
    if status == 408:
        return ErrorKind.TIMEOUT
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status in (503, 529):
        return ErrorKind.OVERLOADED
    if status == 409 or (status is not None and status >= 500):
        return ErrorKind.SERVER
    return ErrorKind.INVALID_REQUEST


def why(status: int | None, what: str | None, text: str) -> str:
    """'429 rate_limit_error: slow down', leaving out what the body did not say (a proxy's page says nothing)."""
    head = " ".join(str(part) for part in (status, what) if part)
    return f"{head}: {text}" if text else head


def anthropic_failure(status: int, body: Any, headers: Mapping[str, str] | None) -> Failure:
    """Anthropic: credit and spend-limit errors come as 402 billing_error or as 400 invalid_request_error."""
    error = body.get("error", body) if isinstance(body, dict) else {}
    error = error if isinstance(error, dict) else {}
    etype, text = str(error.get("type", "")), str(error.get("message", ""))
    kind = status_kind(status)
    if etype == "billing_error" or status == 402 or "credit balance" in text:
        kind = ErrorKind.CREDIT
    elif "specified API usage limits" in text or "monthly spend limit" in text:
        kind = ErrorKind.QUOTA  # a monthly spend limit, as a 400 ("You will regain access on <date>") or as a 429
    elif status == 429 and "daily rate limit" in text:
        kind = ErrorKind.QUOTA
    elif etype == "overloaded_error":
        kind = ErrorKind.OVERLOADED
    elif etype == "timeout_error":
        kind = ErrorKind.TIMEOUT  # documented as 504 timeout_error, which the status alone would call a server error
    return Failure(kind, why(status, etype, text), retry_after(headers))


def openai_failure(status: int, code: str | None, etype: str | None, text: str,
                   headers: Mapping[str, str] | None) -> Failure:
    """OpenAI: `insufficient_quota` and `billing_hard_limit_reached` are money; a per-day limit is a quota."""
    code, etype = code or "", etype or ""
    kind = status_kind(status)
    if "insufficient_quota" in (code, etype) or code == "billing_hard_limit_reached":
        kind = ErrorKind.CREDIT
    elif status == 429 and "per day" in text:
        kind = ErrorKind.QUOTA  # "... on requests per day (RPD)" / "tokens per day (TPD)"
    elif code in ("invalid_api_key", "invalid_authentication"):
        kind = ErrorKind.AUTH
    elif code == "model_not_found":
        kind = ErrorKind.NOT_FOUND
    return Failure(kind, why(status, code or etype, text), retry_after(headers))


def gemini_failure(status: int, state: str | None, text: str, details: list[dict[str, Any]],
                   headers: Mapping[str, str] | None) -> Failure:
    """Gemini: a failed per-day quota is a quota even when a retry delay comes with it; bad keys are 400s."""
    kinds = {str(d.get("@type")).rpartition(".")[2]: d for d in details if isinstance(d, dict)}  # "RetryInfo", ...
    delay = parse_duration((kinds.get("RetryInfo") or {}).get("retryDelay"))
    violations = (kinds.get("QuotaFailure") or {}).get("violations") or []
    per_day = any("PerDay" in str(v.get("quotaId")) for v in violations)  # metrics are snake_case: ids only
    kind = status_kind(status)  # google.rpc codes map to one HTTP status each: UNAUTHENTICATED is a 401, ...
    if (kinds.get("ErrorInfo") or {}).get("reason") == "API_KEY_INVALID":
        kind = ErrorKind.AUTH
    elif state == "FAILED_PRECONDITION":
        kind = ErrorKind.PERMISSION  # the region is not served, or its free tier needs billing (troubleshooting table)
    elif status == 429 and "credits are depleted" in text:
        kind = ErrorKind.CREDIT
    elif status == 429 and (per_day or (violations and delay is None)):
        kind = ErrorKind.QUOTA
    elif state == "DEADLINE_EXCEEDED":
        kind = ErrorKind.TIMEOUT
    return Failure(kind, why(status, state, text), delay if delay is not None else retry_after(headers))


def transport_failure(exc: BaseException) -> Failure:
    """No HTTP answer: a refused connection or unknown host fails at once; timeouts and drops are retried."""
    chain, seen = [], exc
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    reason = f"{type(exc).__name__}: {' '.join(str(exc).split()) or 'connection failed'}"
    if any(isinstance(e, (ConnectionRefusedError, socket.gaierror)) or type(e).__name__ == "ConnectError"
           for e in chain):
        cause = next((e for e in reversed(chain) if isinstance(e, OSError) and str(e)), None)
        return Failure(ErrorKind.CONNECTION, f"cannot connect ({cause or reason})")
    timed_out = any(isinstance(e, TimeoutError) or "Timeout" in type(e).__name__ for e in chain)
    return Failure(ErrorKind.TIMEOUT if timed_out else ErrorKind.SERVER, reason)
