"""Baselines and the --no-abstract ablation: naive, SketchPad (agent loop), APE (text-prompt search)."""

from __future__ import annotations

import pytest
import json

import scripted_models
from sevex_support import TASK, explore, function_backend

from trompe_agents.backends.base import BackendError
from trompe_agents.datasets import load_dataset
from trompe_agents.sevex.cli import main
from trompe_agents.sevex.evaluate import Runner
from trompe_agents.sevex.outcome import dev_accuracy
from trompe_agents.sevex.explore import NAIVE
from trompe_agents.sevex.nuct import NUCTParams
from trompe_agents.sevex.prompt_dir import PromptDir, resolve
from trompe_agents.sevex.sandbox import Sandbox
from trompe_agents.sevex.show import render
from trompe_agents.toolclient import ToolClient

pytestmark = pytest.mark.os_sandbox  # runs generated code through the OS sandbox


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


async def test_sketchpad_uses_tools_through_the_agent_loop_with_few_shot_examples(tmp_path, dev_set):
    log: list = []
    explorer, best = await explore(tmp_path / "run", dev_set, iterations=3, strategy="sketchpad",
                                   explorer=no_explorer, target=recording(scripted_models.target, log))
    assert list(explorer.tree.nodes) == [0]
    # The target cropped with the real crop tool (a 32-px result came back) and answered every sample right.
    assert best.reward == 1.0
    assert sum(role == "tool" for role, _, _ in log) == 6 and "32x32" in next(t for r, _, t in log if r == "tool")
    system = log[0][1]
    assert "Reply at the end with only a JSON object" in system  # the SketchPad system prompt, with examples
    assert all(f"# Example {i}:" in system for i in range(1, 7)) and "# Example 3: jigsaw (BLINK)" in system
    assert "THOUGHT 0:" in system and "overlay_images(" in system and "estimate_depth(" in system
    assert best.implementation.code == "" and best.implementation.prompt in system  # kept as the node's prompt
    results = [json.loads(line) for line in (tmp_path / "run" / "nodes" / "0" / "results.jsonl").open()]
    assert [r["raw"] for r in results] == ["{yes}", "{no}"] * 3
    # The saved prompt folder holds the system prompt and no program: applying it runs the agent loop again.
    prompt = resolve(tmp_path / "run")
    folder = prompt.save(tmp_path / "best")
    assert (folder / "prompt.md").read_text() == best.implementation.prompt
    assert not (folder / "visual_prompt.py").exists()
    assert prompt.meta["dev_accuracy"] == 1.0
    async with ToolClient.in_process() as tools:
        runner = await Runner.create(tools, function_backend(scripted_models.target), TASK, Sandbox(), 2)
        evaluated = await runner.evaluate(PromptDir.load(folder).implementation, list(load_dataset(dev_set)))
        assert dev_accuracy(e.result for e in evaluated) == 1.0


def timing_out(messages, tools):
    raise BackendError("the request timed out after 60 s", "timeout")


async def test_a_request_timeout_in_the_agent_loop_is_told_apart_from_a_program_over_its_time_limit(tmp_path,
                                                                                                     dev_set):
    """SketchPad's samples whose target request times out are recorded as the agent records them (`timeout`, the
    request's); an older run's program line saying `timeout` is shown as the program's (`program_timeout`)."""
    await explore(tmp_path / "run", dev_set, iterations=1, strategy="sketchpad", explorer=no_explorer,
                  target=timing_out)
    results = [json.loads(line) for line in (tmp_path / "run" / "nodes" / "0" / "results.jsonl").open()]
    assert [r["error_kind"] for r in results] == ["timeout"] * 6
    assert "<p class=failures>6 of 6 sample runs failed: timeout 6</p>" in render(tmp_path / "run")
    tree_file = tmp_path / "run" / "tree.json"  # the same lines as an older run's program node wrote them
    tree = json.loads(tree_file.read_text())
    tree["nodes"][0]["implementation"]["code"] = "def main(images, question):\n    return 'yes'\n"
    tree_file.write_text(json.dumps(tree))
    assert "<p class=failures>6 of 6 sample runs failed: program_timeout 6</p>" in render(tmp_path / "run")


async def test_ape_rewrites_sketchpads_prompt_then_resamples_around_the_best(tmp_path, dev_set):
    asked: list = []
    seen: list = []
    explorer, _ = await explore(tmp_path / "run", dev_set, iterations=3, strategy="ape",
                                explorer=recording(scripted_models.explorer, asked),
                                target=recording(scripted_models.target, seen))
    root = explorer.tree.root
    assert "# Example 1:" in root.implementation.prompt and root.reward == 1.0  # the initial state: SketchPad
    rewrites = sorted(explorer.tree.executed(), key=lambda n: n.iteration)[1:]
    assert len(rewrites) == 3 and all(n.implementation.code == "" for n in rewrites)  # agent loop, new prompt
    assert [n.implementation.prompt for n in rewrites] == scripted_models.APE_REWRITES
    # The first request rewrites SketchPad's prompt from its failures; later ones resample around the best.
    assert len(asked) == 3 and "# Example 1:" in asked[0][1]
    assert "proposal step" in asked[0][1] and all("resampling step" in text for _, text, _ in asked[1:])
    assert scripted_models.APE_REWRITES[0][:40] in asked[1][1] and scripted_models.APE_REWRITES[1][:40] in asked[2][1]
    # Each rewritten prompt is the system prompt the target's agent loop received.
    systems = {text for role, text, _ in seen}
    assert all(any(n.implementation.prompt in t for t in systems) for n in rewrites)
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert set(state["costs"]["by_role"]) == {"ape", "target"}


async def test_no_abstract_varies_the_parent_code_without_ideas(tmp_path, dev_set):
    asked: list = []
    explorer, best = await explore(tmp_path / "run", dev_set, iterations=2, abstract=False,
                                   explorer=recording(scripted_models.explorer, asked),
                                   nuct=NUCTParams(gain_scale=0.2))  # a perfect node then beats a fresh sibling
    assert not any("You are the Ideator" in text for _, text, _ in asked)
    engineer = [text for _, text, _ in asked if "You are the Engineer" in text]
    # The first variation starts from the naive code, the second from the first variation's code.
    first, second = sorted(explorer.tree.executed(), key=lambda n: n.iteration)[1:]
    assert NAIVE.code.strip() in engineer[0] and first.implementation.code.strip() in engineer[1]
    assert second.parent == first.id and first.idea == "code variation of node 0"
    assert first.implementation.code == scripted_models.CODE["quarter"] and first.reward == 1.0 and best is first
    assert second.implementation.code == scripted_models.CODE["crop"]


def test_cli_sketchpad_ape_run_saves_a_system_prompt_that_apply_runs_through_the_agent_loop(tmp_path, dev_set,
                                                                                              capsys):
    run = tmp_path / "run"
    assert main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), "--strategy", "ape",
                 "--iterations", "2", "--explorer-backend", "function", "--explorer-model", "scripted_models:explorer",
                 "--target-backend", "function", "--target-model", "scripted_models:target", "--no-progress"]) == 0
    nodes = json.loads((run / "state.json").read_text())["tree"]["nodes"]
    assert len([n for n in nodes if n["experiment"]]) == 3 and "# Example 1:" in nodes[0]["implementation"]["prompt"]
    assert (run / "best" / "prompt.md").exists() and not (run / "best" / "visual_prompt.py").exists()
    capsys.readouterr()
    assert main(["apply", str(run / "best"), "--dataset", str(dev_set), "--include-dev", "--target-backend",
                 "function", "--target-model", "scripted_models:target", "--no-progress"]) == 0
    assert "accuracy 1.000 on 6 samples" in capsys.readouterr().out
