"""The typed records every reader of a run shares: `ErrorKind` (cause, action, hint) and `SampleResult`."""

from __future__ import annotations

import dataclasses
import errno
import json

import pytest
from hypothesis import given, strategies as st

from trompe_agents.backends.base import BackendError
from trompe_agents.backends.retry import Failure
from trompe_agents.failures import Action, ErrorKind, failure_kind
from trompe_agents.records import SampleResult

# Lines in the shapes runs have written (illusion/answering.py answer_one), trimmed to the fields that matter plus
# one the record does not type, which must come back as it was.
ANSWERED = {"id": "s0", "index": 100, "label": "1", "answer": "yes", "agent": "main", "correct": True,
            "error": None, "error_kind": None, "usage": {"input_tokens": 12}}
RESCUED = {**ANSWERED, "id": "s1", "agent": "rescue", "error": "main: no final answer after 8 rounds",
           "error_kind": None}
INVALID = {**ANSWERED, "id": "s2", "answer": None, "agent": None, "correct": None,
           "error": "main: the answer is not one of yes, no", "error_kind": "invalid_answer"}
DISK_FULL = {**INVALID, "id": "s3", "error": "OSError: [Errno 28] No space left on device", "error_kind": "disk_full"}
OLD_DEFAULT = {"id": "s4", "label": "0", "answer": "no", "agent": "default", "correct": True}  # an invented answer
THIRD_PARTY = {**INVALID, "id": "s5", "error_kind": "acme_overheated"}  # a plugin backend's own kind
NO_KIND = {"id": "s6", "label": None, "answer": None, "agent": None, "correct": None}


@pytest.mark.parametrize("line", [ANSWERED, RESCUED, INVALID, DISK_FULL, OLD_DEFAULT, THIRD_PARTY, NO_KIND],
                         ids=lambda line: line["id"])
def test_a_line_reads_and_writes_back_unchanged(line):
    text = json.dumps(line)
    result = SampleResult.from_json(json.loads(text))
    assert json.dumps(result.to_json()) == text


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                         max_size=3), max_leaves=8)


@given(st.dictionaries(st.sampled_from(["id", "answer", "agent", "correct", "label", "error_kind", "error",
                                        "keys", "x"]), json_values))
def test_any_json_object_comes_back_as_it_was(line):
    assert SampleResult.from_json(line).to_json() == line


@pytest.mark.parametrize("usage", [{"input_tokens": None, "output_tokens": 5}, {"input_tokens": "7"},
                                   {"output_tokens": 2.5}, {"input_tokens": True}, [3], {"long": {"bad": 1}}])
def test_token_counts_of_an_unexpected_shape_read_as_none_and_the_line_keeps_them(usage):
    line = {"id": "s0", "usage": usage}
    result = SampleResult.from_json(line)
    assert result.tokens == (5 if usage == {"input_tokens": None, "output_tokens": 5} else 0)
    assert result.to_json() == line


@pytest.mark.parametrize(("line", "failed", "why"), [
    (ANSWERED, False, None), (RESCUED, False, None), (INVALID, True, "invalid_answer"), (DISK_FULL, True, "disk_full"),
    (OLD_DEFAULT, True, "no_answer"), (THIRD_PARTY, True, "acme_overheated"), (NO_KIND, True, "no_answer"),
], ids=lambda v: v["id"] if isinstance(v, dict) else str(v))
def test_failed_means_no_model_answered_whatever_was_recorded_along_the_way(line, failed, why):
    result = SampleResult.from_json(line)
    assert result.failed is failed and result.failure == why
    assert result.right is (line in (ANSWERED, RESCUED))  # an invented answer is never right, even a matching one


@pytest.mark.parametrize(("line", "plain", "retrying"), [
    (ANSWERED, True, True), (INVALID, True, False), (DISK_FULL, False, False), (OLD_DEFAULT, True, False)],
    ids=["answered", "failed", "disk-full", "old-default"])
def test_a_rerun_skips_what_is_done(line, plain, retrying):
    result = SampleResult.from_json(line)
    assert (result.done(), result.done(retry_errors=True)) == (plain, retrying)


def test_a_changed_field_is_written_back_typed_as_a_string():
    from dataclasses import replace

    line = replace(SampleResult.from_json(INVALID), error_kind=ErrorKind.TIMEOUT).to_json()
    assert line == {**INVALID, "error_kind": "timeout"} and type(line["error_kind"]) is str


ACTIONS = {"retry": ["rate_limit", "overloaded", "server", "timeout", "tool_infrastructure"],
           "switch": ["quota", "credit", "refusal"],
           "fatal": ["auth", "permission", "not_found", "invalid_request", "connection", "backend", "empty_reply",
                     "truncated", "invalid_answer", "reply_too_long", "max_rounds", "no_answer", "input",
                     "disk_full", "disk_error", "run"]}
# a SEVEX program's endings and the reading of its answer: no request, so no retry loop acts on them
NOT_REQUESTS = ["exception", "forbidden", "program_timeout", "memory", "crashed", "call_limit", "oversize",
                "score_budget", "unscored"]


def test_every_kind_has_one_action():
    assert sorted(k for kinds in [*ACTIONS.values(), NOT_REQUESTS] for k in kinds) == sorted(ErrorKind)
    for action, kinds in ACTIONS.items():
        assert [ErrorKind(k).action for k in kinds] == [Action(action)] * len(kinds)
    assert [(ErrorKind(k).facts.action, ErrorKind(k).action) for k in NOT_REQUESTS] == \
        [(None, Action.FATAL)] * len(NOT_REQUESTS)


def test_the_tool_infrastructure_kind_is_retried_and_says_where_to_look():
    kind = ErrorKind("tool_infrastructure")
    assert kind.action is Action.RETRY and "tool server" in kind.hint and "--retry-errors" in kind.hint
    assert not kind.stops_run and not kind.redone_on_resume


def test_a_reply_too_long_is_fatal_and_names_the_cap_and_what_to_change():
    from trompe_agents.replies import REPLY_TOO_LONG, ReplyTooLong

    kind = failure_kind(ReplyTooLong("the reply is 100,001 characters"))
    assert kind is ErrorKind.REPLY_TOO_LONG and kind == REPLY_TOO_LONG and kind.action is Action.FATAL
    assert "MAX_REPLY_CHARS" in kind.hint and "--thinking" in kind.hint
    assert not kind.stops_run and not kind.redone_on_resume and not kind.fallback_helps


def test_a_kind_nobody_listed_keeps_its_name_is_fatal_and_has_no_hint():
    kind = ErrorKind("acme_overheated")
    assert (str(kind), kind.action, kind.hint, json.dumps({"k": kind})) == (
        "acme_overheated", Action.FATAL, "", '{"k": "acme_overheated"}')
    with pytest.raises(ValueError):
        ErrorKind("")


@pytest.mark.parametrize(("exc", "kind"), [
    (OSError(errno.ENOSPC, "No space left on device"), "disk_full"), (OSError(errno.EDQUOT, "quota"), "disk_full"),
    (OSError(errno.EIO, "I/O error"), "disk_error"), (OSError(errno.EROFS, "read-only"), "disk_error"),
    (OSError(errno.EACCES, "denied"), "run"), (BackendError("no key", "auth"), "auth"),
    (BackendError("odd", "acme_overheated"), "acme_overheated"), (ValueError("bad"), "run")])
def test_an_exception_is_recorded_under_its_kind(exc, kind):
    assert failure_kind(exc) == kind and isinstance(failure_kind(exc), ErrorKind)


def test_a_failure_acts_on_its_kind_and_keeps_a_wait_only_when_it_retries():
    assert (Failure("rate_limit", "429", 3.0).action, Failure("rate_limit", "429", 3.0).retry_after) == ("retry", 3.0)
    assert (Failure("quota", "429 per day", 3.0).action, Failure("quota", "429 per day", 3.0).retry_after) == (
        "switch", None)
    assert Failure("auth", "401").kind is ErrorKind.AUTH


def test_the_typed_fields_are_the_lines_and_changed_ones_are_written_back_as_json_values():
    line = {"id": 7, "label": "yes", "answer": "no", "agent": "main", "correct": False, "error_kind": "timeout"}
    result = SampleResult.from_json(line)
    assert (result.id, result.label, result.answer, result.agent, result.correct, result.error_kind) == (
        "7", "yes", "no", "main", False, ErrorKind.TIMEOUT)
    assert SampleResult.from_json({}).id == ""
    changed = dataclasses.replace(result, correct=True, error_kind=None).to_json()
    assert changed["correct"] is True and changed["error_kind"] is None and changed["id"] == 7
