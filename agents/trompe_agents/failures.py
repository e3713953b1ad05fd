"""What a failure means, in one place, for both apps: its cause (`ErrorKind`), where it arises (`Source`), what to
do about it (`Action`) and the hint shown, all in one table (`KIND_FACTS`).

The backends' retry loop, the agent loop, runs, resumes, reports and metrics, and SEVEX's sandbox, scorer and
result files all read these, so a kind means the same everywhere (`timeout` is a backend request's; a SEVEX
program over its time limit is `program_timeout`). Kinds are strings in results.jsonl and on
`BackendError.kind`; the enum is str-valued, so the JSON is unchanged. A kind named by a third-party backend
that is not listed here keeps its name (it is fatal and has no hint). The vendors' documented errors each kind
stands for are in backends/error_kinds.py. Standard library only: SEVEX's sandbox, which imports nothing else,
names its endings from here.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
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


class Source(StrEnum):
    """Where a kind arises, and so which of its properties apply."""

    REQUEST = "request"  # a backend request or a tool-server call failed (both apps' agent loops)
    SAMPLE = "sample"  # the agent, or the run around it, could not answer the sample
    PROGRAM = "program"  # SEVEX: how a generated program ended in its sandbox (sevex/sandbox.py)
    READING = "reading"  # SEVEX: reading a program's answer failed (sevex/scoring.py)


class ErrorKind(StrEnum):
    """Why there is no answer, in both apps: a request that failed, a sample that could not be answered, a SEVEX
    program that ended without an answer, or its answer that could not be read."""

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
    TIMEOUT = "timeout"  # the backend request timed out (a program over its time limit is program_timeout)
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
    INPUT = "input"  # the sample's input was refused (an unreadable image, one the tool server refused, ...)
    DISK_FULL = "disk_full"  # the run's disk filled up mid-sample: redone on resume
    DISK_ERROR = "disk_error"  # the run's disk failed (EIO) or turned read-only (EROFS) mid-sample: redone on resume
    RUN = "run"  # anything else that went wrong while answering the sample
    # a SEVEX program ended without an answer (decided in the parent, sevex/sandbox.py)
    EXCEPTION = "exception"  # the program raised
    FORBIDDEN = "forbidden"  # it tried what the sandbox does not allow (a system call, its channel)
    PROGRAM_TIMEOUT = "program_timeout"  # over its CPU or wall-clock limit (older SEVEX files say timeout)
    MEMORY = "memory"  # over the sandbox's memory bound
    CRASHED = "crashed"  # its process ended without a word
    CALL_LIMIT = "call_limit"  # too many tool or LVLM calls
    OVERSIZE = "oversize"  # an answer or message over its size cap
    # a SEVEX program's answer could not be read (sevex/scoring.py)
    SCORE_BUDGET = "score_budget"  # reading it took longer than its time budget
    UNSCORED = "unscored"  # the extractor failed on it

    @classmethod
    def _missing_(cls, value: object) -> ErrorKind | None:
        """A kind this list does not know (a third-party backend's own) stays itself: fatal, without a hint."""
        return open_member(cls, value)

    @property
    def facts(self) -> Facts:
        """Its row of KIND_FACTS; a kind the table does not name is a third-party backend's: fatal and quiet."""
        return KIND_FACTS.get(self, UNLISTED)

    @property
    def source(self) -> Source:
        return self.facts.source

    @property
    def action(self) -> Action:
        """What the retry loop does; a kind that is no request never reaches it, and nothing would retry it."""
        return self.facts.action or Action.FATAL

    @property
    def hint(self) -> str:
        """What the user can do about it ('' when nothing useful can be said)."""
        return self.facts.hint

    @property
    def fallback_helps(self) -> bool:
        """Whether another model may answer where this one failed (the hint then suggests --fallback-model)."""
        return bool(self.facts.fallback_helps)

    @property
    def redone_on_resume(self) -> bool:
        """Whether a rerun of the same command answers the sample again without being asked (--retry-errors)."""
        return self.facts.redone_on_resume

    @property
    def stops_run(self) -> bool:
        """Whether every later sample would fail alike: the first samples of a run failing so stop it."""
        return self.facts.stops_run


NA = None  # in KIND_FACTS: the property does not apply to the kind


@dataclass(frozen=True)
class Facts:
    """One kind's row: where it arises, what the retry loop does (NA: no request, the loop never sees it),
    whether it stops a run whose first samples all fail so, whether a rerun redoes it unasked, whether a
    --fallback-model may help (NA: a program's own ending, no model to switch), and the hint ('' : none)."""

    source: Source
    action: Action | None
    stops_run: bool
    redone_on_resume: bool
    fallback_helps: bool | None
    hint: str = ""


_R, _S, _F, _REQ, _SMP, _PRG, _RD = (Action.RETRY, Action.SWITCH, Action.FATAL, Source.REQUEST, Source.SAMPLE,
                                     Source.PROGRAM, Source.READING)
# every property of every kind; tests/errorkinds.py writes the same table out again
KIND_FACTS: dict[ErrorKind, Facts] = {
    ErrorKind.AUTH: Facts(_REQ, _F, True, False, False, "check the API key (the vendor's variable or --api-key-env)"),
    ErrorKind.PERMISSION: Facts(_REQ, _F, True, False, False,
                                "the key may not use this model or region; check the account's access"),
    ErrorKind.NOT_FOUND: Facts(_REQ, _F, True, False, False, "check --model and --base-url (the URL path)"),
    ErrorKind.INVALID_REQUEST: Facts(_REQ, _F, False, False, False),
    ErrorKind.CONNECTION: Facts(_REQ, _F, True, False, False,
                                "nothing answers there; check --base-url and that the server is running"),
    ErrorKind.RATE_LIMIT: Facts(_REQ, _R, False, False, True, "lower --concurrency or set --rate-limit"),
    ErrorKind.QUOTA: Facts(_REQ, _S, True, False, True, "a daily or monthly cap is used up; wait for it to reset"),
    ErrorKind.CREDIT: Facts(_REQ, _S, True, False, True,
                            "the account is out of credit or at its spend limit; add credit"),
    ErrorKind.OVERLOADED: Facts(_REQ, _R, False, False, True,
                                "the vendor is overloaded; rerun later with --retry-errors"),
    ErrorKind.SERVER: Facts(_REQ, _R, False, False, True, "the vendor failed; rerun later with --retry-errors"),
    ErrorKind.TIMEOUT: Facts(_REQ, _R, False, False, False, "the request timed out; rerun later with --retry-errors"),
    ErrorKind.TRUNCATED: Facts(_REQ, _F, False, False, False, "the answer did not fit the output limit; lower "
                               "--thinking or ask for a shorter answer"),
    # asked again, the same model declines again (the vendors say so)
    ErrorKind.REFUSAL: Facts(_REQ, _S, False, False, True,
                             "the model declined to answer (its words are above); rephrase the prompt"),
    ErrorKind.BACKEND: Facts(_REQ, _F, False, False, False),
    ErrorKind.TOOL_INFRASTRUCTURE: Facts(_REQ, _R, False, False, False, "the tool server lost the session or its "
                                         "registry; check the server (and its Redis), then rerun with --retry-errors"),
    ErrorKind.EMPTY_REPLY: Facts(_SMP, _F, False, False, False),
    ErrorKind.INVALID_ANSWER: Facts(_SMP, _F, False, False, False),
    ErrorKind.REPLY_TOO_LONG: Facts(_SMP, _F, False, False, False, "the model wrote more than a reply may hold "
                                    "(trompe_agents.replies.MAX_REPLY_CHARS); ask for a shorter answer or lower "
                                    "--thinking"),
    ErrorKind.MAX_ROUNDS: Facts(_SMP, _F, False, False, False),
    ErrorKind.NO_ANSWER: Facts(_SMP, _F, False, False, False),
    ErrorKind.INPUT: Facts(_SMP, _F, False, False, False),
    ErrorKind.DISK_FULL: Facts(_SMP, _F, False, True, False,
                               "free disk space, then rerun the same command: these samples are answered again"),
    ErrorKind.DISK_ERROR: Facts(_SMP, _F, False, True, False, "the disk failed or turned read-only; fix it (or move "
                                "--out), then rerun the same command: these samples are answered again"),
    ErrorKind.RUN: Facts(_SMP, _F, False, False, False),
    # a program's ending fails its sample (lowering its node's reward), never the run; --resume keeps it
    ErrorKind.EXCEPTION: Facts(_PRG, NA, False, False, NA),
    ErrorKind.FORBIDDEN: Facts(_PRG, NA, False, False, NA),
    ErrorKind.PROGRAM_TIMEOUT: Facts(_PRG, NA, False, False, NA, "the program ran over its CPU or wall-clock limit; "
                                     "raise the wall-clock limit (sevex --timeout) if it needs longer"),
    ErrorKind.MEMORY: Facts(_PRG, NA, False, False, NA),
    ErrorKind.CRASHED: Facts(_PRG, NA, False, False, NA),
    ErrorKind.CALL_LIMIT: Facts(_PRG, NA, False, False, NA),
    ErrorKind.OVERSIZE: Facts(_PRG, NA, False, False, NA),
    ErrorKind.SCORE_BUDGET: Facts(_RD, NA, False, False, NA),
    ErrorKind.UNSCORED: Facts(_RD, NA, False, False, NA),
}
UNLISTED = Facts(_REQ, _F, False, False, False)  # a third-party backend's own kind


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
