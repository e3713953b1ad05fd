"""Search strategies are objects behind one contract (sevex/strategy.py), chosen by name from the plugin registry;
a plugin adds one, a plugin taking a built-in's name is refused naming both. SEVEX's sample records round-trip
through its JSON lines, older runs' lines included."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sevex_support import explore, sevex_result
from trompe_kernel import hookimpl
from trompe_kernel.errors import PluginConflict
from trompe_kernel.manager import default_plugins

from trompe_agents.failures import ErrorKind, Source
from trompe_agents.messages import Usage
from trompe_agents.sevex import cli as sevex_cli, sandbox, scoring
from trompe_agents.sevex.outcome import broke, dev_accuracy, from_line, line, summary
from trompe_agents.sevex.strategies import NAIVE, SEVEX, choose_strategy, strategy_names
from trompe_agents.sevex.strategy import ExploreConfig, Search
from trompe_agents.sevex.tree import Implementation, Node, SelfEval

BUILT_IN = ["ape", "naive", "sevex", "sketchpad"]
ITERATIONS = 2


@pytest.fixture
def fresh_plugins():
    """A plugin manager of this test's own: what it registers is gone afterwards."""
    default_plugins.cache_clear()
    yield default_plugins()
    default_plugins.cache_clear()


def results_files(run, node: int) -> list[dict]:
    return [json.loads(line) for line in (run / "nodes" / str(node) / "results.jsonl").read_text().splitlines()]


@pytest.mark.os_sandbox
@pytest.mark.parametrize("name", BUILT_IN)
async def test_every_strategy_keeps_the_explorers_contract(tmp_path, dev_set, name):
    """Whatever the strategy: its root is measured first, it runs the iterations it says, every executed node's
    results.jsonl reads back as the outcomes tree.json summarises, the best node is the best executed one, and a
    resumed finished run does nothing more."""
    run = tmp_path / "run"
    explorer, best = await explore(run, dev_set, iterations=ITERATIONS, strategy=name)
    strategy = choose_strategy(name)
    idea, implementation = strategy.root(explorer.runner)
    root = explorer.tree.root
    assert (root.idea, root.implementation, root.iteration) == (idea, implementation, 0) and root.executed
    planned = strategy.iterations(ExploreConfig(iterations=ITERATIONS))
    state = json.loads((run / "state.json").read_text())
    assert state["iteration"] == planned and [h["iteration"] for h in state["history"]] == list(range(planned + 1))
    assert state["tree"] == json.loads((run / "tree.json").read_text())
    for node in explorer.tree.executed():
        if node.experiment.failure:
            continue
        lines = results_files(run, node.id)
        results = [from_line(written, program=bool(node.implementation.code)) for written in lines]
        assert [line(r) for r in results] == lines
        assert [summary(r) for r in results] == node.experiment.results
        # SEVEX's accuracy as it has always been counted: right answers over dev samples
        assert node.reward == dev_accuracy(results) == sum(w["correct"] for w in lines) / len(lines)
    assert best.id == max(explorer.tree.executed(), key=lambda n: (n.reward, -n.iteration, -n.id)).id
    again, best_again = await explore(run, dev_set, iterations=ITERATIONS, strategy=name)
    assert again.iteration == planned and best_again.id == best.id and len(again.tree.nodes) == len(explorer.tree.nodes)


class NaiveTwice:
    """A plugin's strategy: the naive root, then each iteration re-measures the naive prompt as a child of it."""

    def root(self, runner):
        return "a plugin's root", NAIVE

    def iterations(self, config: ExploreConfig) -> int:
        return config.iterations

    async def start(self, search: Search, root: Node) -> None:
        return None

    async def step(self, search: Search) -> Node | None:
        node = search.tree.add(0, f"again, iteration {search.iteration}", SelfEval(5, 5, 10))
        node.implementation = Implementation(NAIVE.code, NAIVE.prompt)
        search.record(node, await search.measure(node.implementation))
        return node


class Registers:
    """A plugin registering strategies by name."""

    def __init__(self, found: dict):
        self.found = found

    @hookimpl
    def register_strategies(self, register):
        for name, factory in self.found.items():
            register(name, factory)


@pytest.mark.os_sandbox
async def test_a_plugins_strategy_is_offered_and_drives_the_run(fresh_plugins, tmp_path, dev_set):
    fresh_plugins.register(Registers({"naive-twice": NaiveTwice}), name="acme")
    assert strategy_names() == sorted([*BUILT_IN, "naive-twice"])
    args = sevex_cli.build_parser().parse_args(["explore", "--out", "o", "--strategy", "naive-twice"])
    assert args.strategy == "naive-twice"
    explorer, best = await explore(tmp_path / "run", dev_set, iterations=2, strategy="naive-twice")
    assert [n.idea for n in explorer.tree.nodes.values()] == ["a plugin's root", "again, iteration 1",
                                                              "again, iteration 2"]
    assert all(n.reward == 0.5 for n in explorer.tree.executed()) and best.id == 0  # earliest of equals


def test_a_plugin_taking_a_built_in_strategy_name_is_refused_naming_both(fresh_plugins):
    fresh_plugins.register(Registers({"sevex": NaiveTwice}), name="twin")
    with pytest.raises(PluginConflict) as refused:
        strategy_names()
    assert str(refused.value) == ("strategy 'sevex' is registered by both plugin 'strategies' and plugin 'twin'; "
                                  "leave one out with the TROMPE_PLUGINS environment variable, or uninstall its "
                                  "distribution (pip uninstall NAME)")


def test_an_unknown_strategy_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError) as refused:
        choose_strategy("greedy")
    assert str(refused.value) == "--strategy: expected one of ape, naive, sevex, sketchpad, got 'greedy'"
    assert isinstance(choose_strategy("sevex"), SEVEX)


def test_every_kind_the_sandbox_and_the_scorer_name_is_one_of_the_shared_vocabulary():
    assert all(isinstance(kind, ErrorKind) and kind.source is Source.PROGRAM for kind in sandbox.KINDS)
    assert {kind.source for kind in (scoring.SCORE_BUDGET, scoring.UNSCORED)} == {Source.READING}
    assert ErrorKind.PROGRAM_TIMEOUT in sandbox.KINDS and ErrorKind.TIMEOUT not in sandbox.KINDS
    assert sandbox.CHILD_KINDS < sandbox.KINDS


@pytest.mark.parametrize("prediction, error, kind, failure", [
    ("yes", None, None, None),
    (None, "ValueError: bad", ErrorKind.EXCEPTION, ErrorKind.EXCEPTION),
    (None, "CPU time limit reached", ErrorKind.PROGRAM_TIMEOUT, ErrorKind.PROGRAM_TIMEOUT),
    (None, None, ErrorKind.MAX_ROUNDS, ErrorKind.MAX_ROUNDS),  # the agent loop stopped without an answer
    (None, "the answer is over its size cap", ErrorKind.OVERSIZE, ErrorKind.OVERSIZE),
    (None, None, None, ErrorKind.NO_ANSWER),  # the extractor read nothing in the text: no answer, wrong
])
def test_a_sample_failed_when_no_answer_was_read_and_its_line_says_why(prediction, error, kind, failure):
    result = sevex_result("s0", prediction, "yes", prediction == "yes", error, kind)
    assert result.failure == failure and result.right is (failure is None)
    assert broke(result) is (error is not None or kind is not None)  # a fault, not only nothing read
    assert line(result)["error_kind"] == str(failure or "ok") and line(result)["correct"] is result.right


@pytest.mark.parametrize("written, program, read", [
    ("timeout", True, "program_timeout"),  # an older file's program over its time limit
    ("timeout", False, "timeout"),  # an agent-loop line: its backend request timed out
    ("program_timeout", True, "program_timeout"), ("program_timeout", False, "program_timeout"),
    ("error", False, "error"),  # older agent-loop lines named how the loop stopped; kept as written
    ("ok", True, None), ("forbidden", True, "forbidden"),
])
def test_a_results_line_reads_under_the_shared_kinds(written, program, read):
    written_line = {"id": "s0", "prediction": None, "answer": "yes", "correct": False, "error": "e",
                    "error_kind": written}
    assert from_line(written_line, program=program).error_kind == read


def test_an_older_run_s_lines_read_as_records_keeping_what_this_version_does_not_name():
    """tree.json of a run made before SEVEX's samples were records: a right answer, one no answer was read in
    (error_kind "ok", counted wrong), a repeat's run number and a field this version does not know."""
    right = {"id": "s1", "prediction": "B", "answer": "B", "correct": True, "error": None, "error_kind": "ok",
             "tokens": 12, "run": 2, "note": "kept"}
    unread = {**right, "id": "s2", "prediction": None, "correct": False}
    read = [from_line(old, program=True) for old in (right, unread)]
    assert [(r.answer, r.label, r.right, r.failure) for r in read] == [("B", "B", True, None),
                                                                       (None, "B", False, ErrorKind.NO_ANSWER)]
    assert dev_accuracy(read) == 0.5  # as the run scored it: one right of two
    assert read[0].to_json()["note"] == "kept" and read[0].to_json()["run"] == 2
    assert {k: v for k, v in summary(read[1]).items() if k != "tokens"} == {
        k: v for k, v in unread.items() if k not in ("tokens", "run", "note")}


texts = st.text(max_size=20)
kinds = st.none() | st.sampled_from(list(ErrorKind)) | st.text(alphabet="abcdefghij_", min_size=1, max_size=12).map(
    ErrorKind)
usages = st.builds(Usage, input_tokens=st.integers(0, 10**9), output_tokens=st.integers(0, 10**9),
                   reasoning_tokens=st.integers(0, 10**6), cached_tokens=st.integers(0, 10**6),
                   image_tokens=st.none() | st.integers(0, 10**6), cache_write_tokens=st.integers(0, 10**6))
records = st.builds(sevex_result, sample_id=texts, prediction=st.none() | texts, label=st.none() | texts,
                    correct=st.booleans(), error=st.none() | texts, kind=kinds, raw=st.none() | texts, usage=usages)


def _facts(result):
    """What a SEVEX line says of a sample."""
    return (result.id, result.answer, result.label, result.right, result.error, result.failure)


@given(result=records, program=st.booleans())
def test_a_sample_record_reads_back_from_its_results_line(result, program):
    written = json.loads(json.dumps(line(result)))  # as results.jsonl holds it
    if program and result.error_kind is ErrorKind.TIMEOUT:  # no program line is written so now (read_kind)
        result = replace(result, error_kind=ErrorKind.PROGRAM_TIMEOUT)
        written["error_kind"] = "program_timeout"
    read = from_line(written, program=program)
    assert _facts(read) == _facts(result) and (read.reply, read.usage) == (result.reply, result.usage)
    assert line(read) == written
    assert list(written) == ["id", "prediction", "answer", "correct", "error", "error_kind", "tokens", "raw", "usage"]
    assert written["tokens"] == result.usage.total and written["error_kind"] == str(result.error_kind or "ok")
    # tree.json's line keeps what the readers of a node need
    assert _facts(from_line(summary(result), program=program)) == _facts(result)
