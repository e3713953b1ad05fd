"""Search strategies are objects behind one contract (sevex/strategy.py), chosen by name from the plugin registry;
a plugin adds one, a plugin taking a built-in's name is refused naming both. SEVEX's typed outcome round-trips
through its JSON lines."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sevex_support import explore
from trompe_kernel import hookimpl
from trompe_kernel.errors import PluginConflict
from trompe_kernel.manager import default_plugins

from trompe_agents.failures import ErrorKind, Source
from trompe_agents.messages import Usage
from trompe_agents.sevex import cli as sevex_cli, sandbox, scoring
from trompe_agents.sevex.outcome import Outcome
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
        outcomes = [Outcome.from_json(line, program=bool(node.implementation.code)) for line in lines]
        assert [o.to_json() for o in outcomes] == lines
        assert [o.summary() for o in outcomes] == node.experiment.results
        assert node.reward == sum(o.correct for o in outcomes) / len(outcomes)
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


@pytest.mark.parametrize("error, kind, failed", [
    (None, None, False),
    ("ValueError: bad", ErrorKind.EXCEPTION, True),
    ("CPU time limit reached", ErrorKind.PROGRAM_TIMEOUT, True),
    (None, ErrorKind.MAX_ROUNDS, True),  # the agent loop stopped without an answer (SketchPad)
    ("the answer is over its size cap", ErrorKind.OVERSIZE, True),
])
def test_an_outcome_failed_when_it_names_an_error_or_a_kind(error, kind, failed):
    outcome = Outcome("s0", None, "yes", False, error=error, error_kind=kind)
    assert outcome.failed is failed and outcome.error_kind is kind
    assert outcome.to_json()["error_kind"] == (str(kind) if kind else "ok")


@pytest.mark.parametrize("written, program, read", [
    ("timeout", True, "program_timeout"),  # an older file's program over its time limit
    ("timeout", False, "timeout"),  # an agent-loop line: its backend request timed out
    ("program_timeout", True, "program_timeout"), ("program_timeout", False, "program_timeout"),
    ("error", False, "error"),  # older agent-loop lines named how the loop stopped; kept as written
    ("ok", True, None), ("forbidden", True, "forbidden"),
])
def test_a_results_line_reads_under_the_shared_kinds(written, program, read):
    line = {"id": "s0", "prediction": None, "answer": "yes", "correct": False, "error": "e", "error_kind": written}
    assert Outcome.from_json(line, program=program).error_kind == read


texts = st.text(max_size=20)
kinds = st.none() | st.sampled_from(list(ErrorKind)) | st.text(alphabet="abcdefghij_", min_size=1, max_size=12).map(
    ErrorKind)
usages = st.builds(Usage, input_tokens=st.integers(0, 10**9), output_tokens=st.integers(0, 10**9),
                   reasoning_tokens=st.integers(0, 10**6), cached_tokens=st.integers(0, 10**6),
                   image_tokens=st.none() | st.integers(0, 10**6), cache_write_tokens=st.integers(0, 10**6))
outcomes = st.builds(Outcome, id=texts, prediction=st.none() | texts, answer=st.none() | texts,
                     correct=st.booleans(), raw=st.none() | texts, error=st.none() | texts, error_kind=kinds,
                     usage=usages)


@given(outcome=outcomes, program=st.booleans())
def test_an_outcome_reads_back_from_its_results_line(outcome, program):
    line = json.loads(json.dumps(outcome.to_json()))  # as results.jsonl holds it
    if program and outcome.error_kind is ErrorKind.TIMEOUT:  # no program line is written so now (read_kind)
        outcome = replace(outcome, error_kind=ErrorKind.PROGRAM_TIMEOUT)
        line["error_kind"] = "program_timeout"
    assert Outcome.from_json(line, program=program) == outcome
    assert Outcome.from_json(line, program=program).to_json() == line
    assert list(line) == ["id", "prediction", "answer", "correct", "error", "error_kind", "tokens", "raw", "usage"]
    assert line["tokens"] == outcome.usage.total and line["error_kind"] == str(outcome.error_kind or "ok")
    # tree.json's line keeps what the readers of a node need
    summary = Outcome.from_json(outcome.summary(), program=program)
    assert (summary.id, summary.prediction, summary.answer, summary.correct, summary.error, summary.error_kind) == (
        outcome.id, outcome.prediction, outcome.answer, outcome.correct, outcome.error, outcome.error_kind)
