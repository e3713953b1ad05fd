"""Every property of every ErrorKind in one table (failures.py): what the retry loop does, whether the first
samples failing so stop a run, whether a rerun redoes the sample unasked, whether a --fallback-model may answer,
and whether the user is told what to do; for both apps (a SEVEX program's ending is a kind too, with NA where a
property does not apply). A kind added without a row fails here."""

from __future__ import annotations

import pytest

from errorkinds import KIND_TABLE as TABLE
from trompe_agents.failures import Action, ErrorKind, Source


def test_the_table_names_every_kind():
    assert sorted(TABLE) == sorted(kind.value for kind in ErrorKind)


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_every_property_of_each_kind(kind):
    source, action, stops, redone, fallback, hinted = TABLE[kind.value]
    facts = kind.facts
    assert (facts.source, facts.action, facts.stops_run, facts.redone_on_resume, facts.fallback_helps,
            bool(facts.hint)) == (source, action, stops, redone, fallback, hinted)
    # what the retry loop and the runner read: a property that does not apply acts as fatal and quiet
    assert (kind.source, kind.action, kind.stops_run, kind.redone_on_resume, kind.fallback_helps, bool(kind.hint)) == \
        (source, action or Action.FATAL, stops, redone, bool(fallback), hinted)
    assert kind.hint == kind.hint.strip() and "\n" not in kind.hint  # one line, shown after the error


def test_a_kind_no_table_names_is_fatal_and_quiet():
    """A third-party backend's own kind keeps its name and stops nothing."""
    kind = ErrorKind("vendor_specific")
    assert (kind.action, kind.stops_run, kind.redone_on_resume, kind.fallback_helps, kind.hint) == \
        (Action.FATAL, False, False, False, "")


def test_a_request_timeout_and_a_program_over_its_time_limit_are_two_kinds():
    request, program = ErrorKind("timeout"), ErrorKind("program_timeout")
    assert (request.source, program.source) == (Source.REQUEST, Source.PROGRAM)
    assert request.action is Action.RETRY and program.facts.action is None  # no retry loop runs a program
    assert "--retry-errors" in request.hint and "sevex --timeout" in program.hint
