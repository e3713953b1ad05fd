"""Every property of every ErrorKind as the project means it (failures.py), written out once for the tests that
check the properties themselves and the runs that act on them. NA: the property does not apply to the kind (the
retry loop never sees a SEVEX program's ending or the reading of its answer, and no other model can help it)."""

from __future__ import annotations

from trompe_agents.failures import Action, Source

R, S, F = Action.RETRY, Action.SWITCH, Action.FATAL
REQ, SMP, PRG, RD = Source.REQUEST, Source.SAMPLE, Source.PROGRAM, Source.READING
NA = None
# kind: (source, action, stops_run, redone_on_resume, fallback_helps, has a hint)
KIND_TABLE = {
    "auth": (REQ, F, True, False, False, True),
    "permission": (REQ, F, True, False, False, True),
    "not_found": (REQ, F, True, False, False, True),
    "invalid_request": (REQ, F, False, False, False, False),
    "connection": (REQ, F, True, False, False, True),
    "rate_limit": (REQ, R, False, False, True, True),
    "quota": (REQ, S, True, False, True, True),
    "credit": (REQ, S, True, False, True, True),
    "overloaded": (REQ, R, False, False, True, True),
    "server": (REQ, R, False, False, True, True),
    "timeout": (REQ, R, False, False, False, True),
    "truncated": (REQ, F, False, False, False, True),
    "backend": (REQ, F, False, False, False, False),
    "refusal": (REQ, S, False, False, True, True),
    "tool_infrastructure": (REQ, R, False, False, False, True),
    "empty_reply": (SMP, F, False, False, False, False),
    "invalid_answer": (SMP, F, False, False, False, False),
    "reply_too_long": (SMP, F, False, False, False, True),
    "max_rounds": (SMP, F, False, False, False, False),
    "no_answer": (SMP, F, False, False, False, False),
    "input": (SMP, F, False, False, False, False),
    "disk_full": (SMP, F, False, True, False, True),
    "disk_error": (SMP, F, False, True, False, True),
    "run": (SMP, F, False, False, False, False),
    "exception": (PRG, NA, False, False, NA, False),
    "forbidden": (PRG, NA, False, False, NA, False),
    "program_timeout": (PRG, NA, False, False, NA, True),
    "memory": (PRG, NA, False, False, NA, False),
    "crashed": (PRG, NA, False, False, NA, False),
    "call_limit": (PRG, NA, False, False, NA, False),
    "oversize": (PRG, NA, False, False, NA, False),
    "score_budget": (RD, NA, False, False, NA, False),
    "unscored": (RD, NA, False, False, NA, False),
}


def stops_run(kind: str) -> bool:
    """Whether the first samples of a run failing with `kind` stop it, as the table says."""
    return KIND_TABLE[kind][2]
