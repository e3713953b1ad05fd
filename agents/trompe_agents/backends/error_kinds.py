"""What a vendor error means, read from the vendors' documented error bodies and the real ones users report.

Each reader returns a `Failure` with an action (`retry`, `quota`: switch model, `fatal`) and an error kind that
runs, reports and hints use: auth, permission, not_found, invalid_request, rate_limit, quota (a daily or monthly
cap that resets), credit (no credit left, spend limit), overloaded, server, timeout, connection.
Sources: docs.claude.com/en/api/errors, platform.openai.com/docs/guides/error-codes,
ai.google.dev/gemini-api/docs/troubleshooting; the reported bodies are cited in testing/fake_vendors.py.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

from .retry import Failure, parse_duration, retry_after

RETRY_KINDS = ("rate_limit", "overloaded", "server", "timeout")
SWITCH_KINDS = ("quota", "credit")  # retrying the same model will not help; a fallback model may
FATAL_KINDS = ("auth", "permission", "not_found", "invalid_request", "connection")

HINTS = {
    "auth": "check the API key (the vendor's variable or --api-key-env)",
    "permission": "the key may not use this model or region; check the account's access",
    "not_found": "check --model and --base-url (the URL path)",
    "connection": "nothing answers there; check --base-url and that the server is running",
    "quota": "a daily or monthly cap is used up; wait for it to reset",
    "credit": "the account is out of credit or at its spend limit; add credit",
    "rate_limit": "lower --concurrency or set --rate-limit",
    "overloaded": "the vendor is overloaded; rerun later with --retry-errors",
    "server": "the vendor failed; rerun later with --retry-errors",
    "timeout": "the request timed out; rerun later with --retry-errors",
}
FALLBACK_HELPS = ("quota", "credit", "rate_limit", "overloaded", "server")  # another model may answer


def status_kind(status: int | None) -> str:
    """The error kind an HTTP status means when the body says nothing more specific."""
    if status in (401,):
        return "auth"
    if status == 403:
        return "permission"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status == 429:
        return "rate_limit"
    if status in (503, 529):
        return "overloaded"
    if status == 409 or (status is not None and status >= 500):
        return "server"
    return "invalid_request"


def why(status: int | None, what: str | None, text: str) -> str:
    """'429 rate_limit_error: slow down', leaving out what the body did not say (a proxy's page says nothing)."""
    head = " ".join(str(part) for part in (status, what) if part)
    return f"{head}: {text}" if text else head


def failure(kind: str, reason: str, wait: float | None = None) -> Failure:
    """A Failure whose action follows from its kind."""
    action = "retry" if kind in RETRY_KINDS else "quota" if kind in SWITCH_KINDS else "fatal"
    return Failure(action, reason, wait if action == "retry" else None, kind)


def anthropic_failure(status: int, body: Any, headers: Mapping[str, str] | None) -> Failure:
    """Anthropic: credit and spend-limit errors come as 402 billing_error or as 400 invalid_request_error."""
    error = body.get("error", body) if isinstance(body, dict) else {}
    error = error if isinstance(error, dict) else {}
    etype, text = str(error.get("type", "")), str(error.get("message", ""))
    kind = status_kind(status)
    if etype == "billing_error" or status == 402 or "credit balance" in text:
        kind = "credit"
    elif "specified API usage limits" in text or "monthly spend limit" in text:
        kind = "quota"  # a monthly spend limit, as a 400 ("You will regain access on <date>") or as a 429
    elif status == 429 and "daily rate limit" in text:
        kind = "quota"
    elif etype == "overloaded_error":
        kind = "overloaded"
    elif etype == "timeout_error":
        kind = "timeout"  # documented as 504 timeout_error, which the status alone would call a server error
    return failure(kind, why(status, etype, text), retry_after(headers))


def openai_failure(status: int, code: str | None, etype: str | None, text: str,
                   headers: Mapping[str, str] | None) -> Failure:
    """OpenAI: `insufficient_quota` and `billing_hard_limit_reached` are money; a per-day limit is a quota."""
    code, etype = code or "", etype or ""
    kind = status_kind(status)
    if "insufficient_quota" in (code, etype) or code == "billing_hard_limit_reached":
        kind = "credit"
    elif status == 429 and "per day" in text:
        kind = "quota"  # "... on requests per day (RPD)" / "tokens per day (TPD)"
    elif code in ("invalid_api_key", "invalid_authentication"):
        kind = "auth"
    elif code == "model_not_found":
        kind = "not_found"
    return failure(kind, why(status, code or etype, text), retry_after(headers))


def gemini_failure(status: int, state: str | None, text: str, details: list[dict[str, Any]],
                   headers: Mapping[str, str] | None) -> Failure:
    """Gemini: a failed per-day quota is a quota even when a retry delay comes with it; bad keys are 400s."""
    kinds = {str(d.get("@type")).rpartition(".")[2]: d for d in details if isinstance(d, dict)}  # "RetryInfo", ...
    delay = parse_duration((kinds.get("RetryInfo") or {}).get("retryDelay"))
    violations = (kinds.get("QuotaFailure") or {}).get("violations") or []
    per_day = any("PerDay" in str(v.get("quotaId")) for v in violations)  # metrics are snake_case: ids only
    kind = status_kind(status)  # google.rpc codes map to one HTTP status each: UNAUTHENTICATED is a 401, ...
    if (kinds.get("ErrorInfo") or {}).get("reason") == "API_KEY_INVALID":
        kind = "auth"
    elif state == "FAILED_PRECONDITION":
        kind = "permission"  # the region is not served, or its free tier needs billing (troubleshooting table)
    elif status == 429 and "credits are depleted" in text:
        kind = "credit"
    elif status == 429 and (per_day or (violations and delay is None)):
        kind = "quota"
    elif state == "DEADLINE_EXCEEDED":
        kind = "timeout"
    return failure(kind, why(status, state, text), delay if delay is not None else retry_after(headers))


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
        return failure("connection", f"cannot connect ({cause or reason})")
    timed_out = any(isinstance(e, TimeoutError) or "Timeout" in type(e).__name__ for e in chain)
    return failure("timeout" if timed_out else "server", reason)
