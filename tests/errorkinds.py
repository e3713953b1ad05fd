"""Every property of every ErrorKind as the project means it (failures.py), written out once for the tests that
check the properties themselves and the runs that act on them."""

from __future__ import annotations

from trompe_agents.failures import Action

R, S, F = Action.RETRY, Action.SWITCH, Action.FATAL
# kind: (action, stops_run, redone_on_resume, fallback_helps, has a hint)
KIND_TABLE = {
    "auth": (F, True, False, False, True),
    "permission": (F, True, False, False, True),
    "not_found": (F, True, False, False, True),
    "invalid_request": (F, False, False, False, False),
    "connection": (F, True, False, False, True),
    "rate_limit": (R, False, False, True, True),
    "quota": (S, True, False, True, True),
    "credit": (S, True, False, True, True),
    "overloaded": (R, False, False, True, True),
    "server": (R, False, False, True, True),
    "timeout": (R, False, False, False, True),
    "truncated": (F, False, False, False, True),
    "backend": (F, False, False, False, False),
    "refusal": (S, False, False, True, True),
    "tool_infrastructure": (R, False, False, False, True),
    "empty_reply": (F, False, False, False, False),
    "invalid_answer": (F, False, False, False, False),
    "reply_too_long": (F, False, False, False, True),
    "max_rounds": (F, False, False, False, False),
    "no_answer": (F, False, False, False, False),
    "input": (F, False, False, False, False),
    "disk_full": (F, False, True, False, True),
    "disk_error": (F, False, True, False, True),
    "run": (F, False, False, False, False),
}


def stops_run(kind: str) -> bool:
    """Whether the first samples of a run failing with `kind` stop it, as the table says."""
    return KIND_TABLE[kind][1]
