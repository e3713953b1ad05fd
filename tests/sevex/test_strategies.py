"""Baselines and the --no-abstract ablation: naive, SketchPad (agent loop), APE (text-prompt search)."""

from __future__ import annotations

import json

import scripted_models
from sevex_support import TASK, explore, function_backend

from trompe_agents.datasets import load_dataset
from trompe_agents.sevex.evaluate import Runner, accuracy
from trompe_agents.sevex.explore import NAIVE
from trompe_agents.sevex.prompt_dir import resolve
from trompe_agents.sevex.sandbox import Sandbox
from trompe_agents.toolclient import ToolClient


def no_explorer(messages, tools):
    raise AssertionError("this strategy must not call the explorer model")


def recording(fn, log: list):
    """The same model, keeping the text of every request it receives."""
    def wrapped(messages, tools):
        log.append((messages[-1].role, messages[0].text, messages[-1].text))
        return fn(messages, tools)
    return wrapped


async def test_naive_measures_only_the_plain_question(tmp_path, dev_set):
    explorer, best = await explore(tmp_path / "run", dev_set, iterations=5, strategy="naive",
                                   explorer=no_explorer)
    assert list(explorer.tree.nodes) == [0] and best.id == 0
    assert best.implementation == NAIVE and best.reward == 0.5  # the fooled target says yes to all six
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["iteration"] == 0 and set(state["costs"]["by_role"]) == {"target"}


async def test_sketchpad_uses_tools_through_the_agent_loop(tmp_path, dev_set):
    log: list = []
    explorer, best = await explore(tmp_path / "run", dev_set, iterations=3, strategy="sketchpad",
                                   explorer=no_explorer, target=recording(scripted_models.target, log))
    assert list(explorer.tree.nodes) == [0] and best.implementation is None
    # The target cropped with the real crop tool (a 32-px result came back) and answered every sample right.
    assert best.reward == 1.0
    assert sum(role == "tool" for role, _, _ in log) == 6 and "32x32" in next(t for r, _, t in log if r == "tool")
    assert "Reply at the end with only a JSON object" in log[0][1]  # the SketchPad system prompt
    results = [json.loads(line) for line in (tmp_path / "run" / "nodes" / "0" / "results.jsonl").open()]
    assert [r["raw"] for r in results] == ["{yes}", "{no}"] * 3
    # The saved prompt folder has no program: applying it runs the agent loop again, with the same result.
    prompt = resolve(tmp_path / "run")
    assert prompt.implementation is None and prompt.meta["dev_accuracy"] == 1.0
    async with ToolClient.in_process() as tools:
        runner = await Runner.create(tools, function_backend(scripted_models.target), TASK, Sandbox(), 2)
        assert accuracy(await runner.evaluate_agentic(list(load_dataset(dev_set)))) == 1.0


async def test_ape_rewrites_the_text_prompt_from_failures_and_keeps_the_naive_code(tmp_path, dev_set):
    asked: list = []
    seen: list = []
    explorer, _ = await explore(tmp_path / "run", dev_set, iterations=3, strategy="ape",
                                explorer=recording(scripted_models.explorer, asked),
                                target=recording(scripted_models.target, seen))
    rewrites = sorted(explorer.tree.executed(), key=lambda n: n.iteration)[1:]
    assert len(rewrites) == 3
    assert all(n.implementation.code == NAIVE.code for n in rewrites)  # only the text prompt changes
    prompts = [n.implementation.prompt for n in rewrites]
    assert prompts == [*scripted_models.APE_REWRITES[:2], "Be careful with positions.\n{question}"]
    # Each request showed the failures (the right-hand samples, answered yes) and every prompt tried so far.
    assert len(asked) == 3
    assert all("answered 'yes', correct 'no'" in text for _, text, _ in asked)
    assert scripted_models.APE_REWRITES[0] in asked[1][1] and scripted_models.APE_REWRITES[1] in asked[2][1]
    # The rewritten prompt, question filled in, is what the target received.
    assert "Look at the left half first. Is the red square on the left?" in {t for _, _, t in seen}
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert set(state["costs"]["by_role"]) == {"ape", "target"}


async def test_no_abstract_varies_the_parent_code_without_ideas(tmp_path, dev_set):
    asked: list = []
    explorer, best = await explore(tmp_path / "run", dev_set, iterations=2, abstract=False,
                                   explorer=recording(scripted_models.explorer, asked))
    assert not any("You are the Ideator" in text for _, text, _ in asked)
    engineer = [text for _, text, _ in asked if "You are the Engineer" in text]
    # The first variation starts from the naive code, the second from the first variation's code.
    first, second = sorted(explorer.tree.executed(), key=lambda n: n.iteration)[1:]
    assert NAIVE.code.strip() in engineer[0] and first.implementation.code.strip() in engineer[1]
    assert second.parent == first.id and first.idea == "code variation of node 0"
    assert first.implementation.code == scripted_models.CODE["quarter"] and first.reward == 1.0 and best is first
    assert second.implementation.code == scripted_models.CODE["crop"]
