"""Every property of every ErrorKind in one table (failures.py): what the retry loop does, whether the first
samples failing so stop a run, whether a rerun redoes the sample unasked, whether a --fallback-model may answer,
and whether the user is told what to do. A kind added without a row fails here."""

from __future__ import annotations

import pytest

from errorkinds import KIND_TABLE as TABLE
from trompe_agents.failures import Action, ErrorKind


def test_the_table_names_every_kind():
    assert sorted(TABLE) == sorted(kind.value for kind in ErrorKind)


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_every_property_of_each_kind(kind):
    action, stops, redone, fallback, hinted = TABLE[kind.value]
    assert (kind.action, kind.stops_run, kind.redone_on_resume, kind.fallback_helps, bool(kind.hint)) == \
        (action, stops, redone, fallback, hinted)
    assert kind.hint == kind.hint.strip() and "\n" not in kind.hint  # one line, shown after the error


def test_a_kind_no_table_names_is_fatal_and_quiet():
    """A third-party backend's own kind keeps its name and stops nothing."""
    kind = ErrorKind("vendor_specific")
    assert (kind.action, kind.stops_run, kind.redone_on_resume, kind.fallback_helps, kind.hint) == \
        (Action.FATAL, False, False, False, "")
