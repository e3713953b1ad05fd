"""What a failure means, in one place: its cause (`ErrorKind`), what to do about it (`Action`) and the hint shown.

The backends' retry loop, the agent loop, runs, resumes, reports and metrics all read these, so a kind means
the same everywhere. Kinds are strings in results.jsonl and on `BackendError.kind`; the enum is str-valued,
so the JSON is unchanged. A kind named by a third-party backend that is not listed here keeps its name (it is
fatal and has no hint). The vendors' documented errors each kind stands for are in backends/error_kinds.py.
"""

from __future__ import annotations

import errno
from enum import StrEnum
from typing import TypeVar

E = TypeVar("E", bound=StrEnum)


class Action(StrEnum):
    """What the retry loop does about a failed request."""

    RETRY = "retry"  # transient: wait and send it again
    SWITCH = "switch"  # the same model will not answer (out of quota or credit); a --fallback-model may
    FATAL = "fatal"  # no retry helps: say why and stop


def open_member(cls: type[E], value: object) -> E | None:
    """An enum member for a kind its list does not name, so an open set of string kinds keeps each as written."""
    if not isinstance(value, str) or not value:
        return None
    member = str.__new__(cls, value)
    member._name_, member._value_ = value.upper(), value
    return member


class ErrorKind(StrEnum):
    """Why there is no answer: a request that failed, or a sample that could not be answered."""

    # a backend request failed (backends/error_kinds.py reads each vendor's errors as one of these)
    AUTH = "auth"
    PERMISSION = "permission"
    NOT_FOUND = "not_found"
    INVALID_REQUEST = "invalid_request"
    CONNECTION = "connection"
    RATE_LIMIT = "rate_limit"
    QUOTA = "quota"  # a daily or monthly cap that resets
    CREDIT = "credit"  # no credit left, or at the spend limit
    OVERLOADED = "overloaded"
    SERVER = "server"
    TIMEOUT = "timeout"
    TRUNCATED = "truncated"  # the reply was cut off at the output-token limit, even asked again with twice the limit
    REFUSAL = "refusal"  # the model declined or a safety filter stopped it; the vendor's words are in the error
    BACKEND = "backend"  # a backend failed without saying how (a bad --model spec, a broken cassette, ...)
    # a tool call failed for reasons of the tool server, not of its arguments: the session was evicted, the
    # registry's storage is down, the replica that held the session is gone
    TOOL_INFRASTRUCTURE = "tool_infrastructure"
    # a sample could not be answered
    EMPTY_REPLY = "empty_reply"  # the model replied with nothing, again and again
    INVALID_ANSWER = "invalid_answer"  # the final answer did not match its schema, even after a correction
    REPLY_TOO_LONG = "reply_too_long"  # over replies.MAX_REPLY_CHARS, unparsed; asked again it comes back alike
    MAX_ROUNDS = "max_rounds"  # no final answer within --max-rounds
    NO_ANSWER = "no_answer"  # no agent answered and none said why
    INPUT = "input"  # the sample's input was refused (an unreadable image, ...)
    DISK_FULL = "disk_full"  # the run's disk filled up mid-sample: redone on resume
    DISK_ERROR = "disk_error"  # the run's disk failed (EIO) or turned read-only (EROFS) mid-sample: redone on resume
    RUN = "run"  # anything else that went wrong while answering the sample

    @classmethod
    def _missing_(cls, value: object) -> ErrorKind | None:
        """A kind this list does not know (a third-party backend's own) stays itself: fatal, without a hint."""
        return open_member(cls, value)

    @property
    def action(self) -> Action:
        return _ACTIONS.get(self, Action.FATAL)

    @property
    def hint(self) -> str:
        """What the user can do about it ('' when nothing useful can be said)."""
        return _HINTS.get(self, "")

    @property
    def fallback_helps(self) -> bool:
        """Whether another model may answer where this one failed (the hint then suggests --fallback-model)."""
        return self in (ErrorKind.QUOTA, ErrorKind.CREDIT, ErrorKind.RATE_LIMIT, ErrorKind.OVERLOADED,
                        ErrorKind.SERVER, ErrorKind.REFUSAL)

    @property
    def redone_on_resume(self) -> bool:
        """Whether a rerun of the same command answers the sample again without being asked (--retry-errors)."""
        return self in DISK_KINDS

    @property
    def stops_run(self) -> bool:
        """Whether every later sample would fail alike: the first samples of a run failing so stop it."""
        return self in (ErrorKind.AUTH, ErrorKind.PERMISSION, ErrorKind.NOT_FOUND, ErrorKind.CONNECTION,
                        ErrorKind.QUOTA, ErrorKind.CREDIT)


_ACTIONS = {
    ErrorKind.RATE_LIMIT: Action.RETRY, ErrorKind.OVERLOADED: Action.RETRY, ErrorKind.SERVER: Action.RETRY,
    ErrorKind.TIMEOUT: Action.RETRY, ErrorKind.TOOL_INFRASTRUCTURE: Action.RETRY,
    ErrorKind.QUOTA: Action.SWITCH, ErrorKind.CREDIT: Action.SWITCH,
    ErrorKind.REFUSAL: Action.SWITCH,  # asked again, the same model declines again (the vendors say so)
}

_HINTS = {
    ErrorKind.AUTH: "check the API key (the vendor's variable or --api-key-env)",
    ErrorKind.PERMISSION: "the key may not use this model or region; check the account's access",
    ErrorKind.NOT_FOUND: "check --model and --base-url (the URL path)",
    ErrorKind.CONNECTION: "nothing answers there; check --base-url and that the server is running",
    ErrorKind.QUOTA: "a daily or monthly cap is used up; wait for it to reset",
    ErrorKind.CREDIT: "the account is out of credit or at its spend limit; add credit",
    ErrorKind.RATE_LIMIT: "lower --concurrency or set --rate-limit",
    ErrorKind.OVERLOADED: "the vendor is overloaded; rerun later with --retry-errors",
    ErrorKind.SERVER: "the vendor failed; rerun later with --retry-errors",
    ErrorKind.TIMEOUT: "the request timed out; rerun later with --retry-errors",
    ErrorKind.REFUSAL: "the model declined to answer (its words are above); rephrase the prompt",
    ErrorKind.TRUNCATED: "the answer did not fit the output limit; lower --thinking or ask for a shorter answer",
    ErrorKind.TOOL_INFRASTRUCTURE: "the tool server lost the session or its registry; check the server (and its "
                                   "Redis), then rerun with --retry-errors",
    ErrorKind.DISK_FULL: "free disk space, then rerun the same command: these samples are answered again",
    ErrorKind.DISK_ERROR: "the disk failed or turned read-only; fix it (or move --out), then rerun the same "
                          "command: these samples are answered again",
    ErrorKind.REPLY_TOO_LONG: "the model wrote more than a reply may hold (trompe_agents.replies.MAX_REPLY_CHARS); "
                              "ask for a shorter answer or lower --thinking",
}


DISK_KINDS = frozenset({ErrorKind.DISK_FULL, ErrorKind.DISK_ERROR})  # the run's disk refused a write: the run stops
WRITE_ERRNOS = {errno.ENOSPC: ErrorKind.DISK_FULL, errno.EDQUOT: ErrorKind.DISK_FULL,
                errno.EIO: ErrorKind.DISK_ERROR, errno.EROFS: ErrorKind.DISK_ERROR}


def failure_kind(exc: BaseException) -> ErrorKind:
    """The kind a failure is recorded under: disk_full or disk_error (redone on resume), the error's own kind,
    or run."""
    if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS:
        return WRITE_ERRNOS[exc.errno]
    kind = getattr(exc, "kind", None)
    return ErrorKind(kind) if isinstance(kind, str) and kind else ErrorKind.RUN
