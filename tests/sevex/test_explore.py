"""A full small exploration with scripted models: growth, back-propagation, best node, apply, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import scripted_models
from sevex_support import HERE, TASK, explore, function_backend
from signalkit import STARTS

from trompe_agents.backends.base import QuotaExhausted
from trompe_agents.datasets import load_dataset
from trompe_agents.sevex.cli import main
from trompe_agents.sevex.evaluate import Runner
from trompe_agents.sevex.explore import ExploreConfig, Explorer, RunExists
from trompe_agents.sevex.roles import Roles
from trompe_agents.sevex.sandbox import Sandbox
from trompe_agents.sevex.show import render
from trompe_agents.toolclient import ToolClient

pytestmark = pytest.mark.os_sandbox  # runs generated code through the OS sandbox


async def test_exploration_grows_the_tree_and_finds_the_crop_idea(tmp_path, dev_set):
    explorer, best = await explore(tmp_path / "run", dev_set, iterations=5)
    tree = explorer.tree
    root = tree.root
    assert root.reward == 0.5  # the fooled target always says yes: 3 of 6
    executed = tree.executed()
    assert len(executed) == 6  # root + one node per iteration
    assert sorted(n.iteration for n in executed) == [0, 1, 2, 3, 4, 5]
    # The infeasible idea was rejected, never added.
    assert not any("teleporter" in n.idea for n in tree.nodes.values())
    # Every successfully executed node keeps k=3 unexecuted children.
    for node in executed:
        if not node.experiment.failure and node.experiment.reward > 0:
            assert sum(not c.executed for c in tree.children(node.id)) == 3, node.idea
    # The sandbox escape failed its node (every sample forbidden) and the search went on.
    secret = next(n for n in executed if "secret" in n.idea)
    assert secret.reward == 0 and all(r["error_kind"] == "forbidden" for r in secret.experiment.results)
    page = render(tmp_path / "run")  # `sevex show` says why the node scored 0, under the node
    assert page.count("<p class=failures>") == 1
    assert page.split(f'id="node-{secret.id}"')[1].split("<details")[0].count(
        "<p class=failures>6 of 6 sample runs failed: forbidden 6</p>") == 1
    # Crop-the-left-half answers every sample correctly and is the best node.
    assert "Crop the left half" in best.idea and best.reward == 1.0
    # Semantic back-propagation: the insights of every executed descendant reached the root.
    for node in executed[1:]:
        for insight in node.experiment.insights:
            assert any(insight in received for received in root.received_insights)
    # Representative images were saved for the analyst and exist on disk.
    assert best.experiment.images and all(Path(p).exists() for p in best.experiment.images)
    # Checkpoint files describe the same tree.
    saved = json.loads((tmp_path / "run" / "tree.json").read_text())
    assert len(saved["nodes"]) == len(tree.nodes)
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["iteration"] == 5 and [h["best"] for h in state["history"]] == sorted(
        h["best"] for h in state["history"])


async def test_no_backprop_keeps_insights_on_their_node(tmp_path, dev_set):
    explorer, _ = await explore(tmp_path / "run", dev_set, iterations=3, backprop=False)
    assert all(not n.received_insights for n in explorer.tree.nodes.values())


async def test_no_tree_refines_a_single_chain(tmp_path, dev_set):
    explorer, _ = await explore(tmp_path / "run", dev_set, iterations=3, tree=False)
    executed = sorted(explorer.tree.executed(), key=lambda n: n.iteration)
    for parent, child in zip(executed, executed[1:]):
        assert child.parent == parent.id


async def test_existing_run_needs_resume(tmp_path, dev_set):
    await explore(tmp_path / "run", dev_set, iterations=1)
    async with ToolClient.in_process() as tools:
        runner = await Runner.create(tools, function_backend(scripted_models.target), TASK, Sandbox(), 1)
        explorer = Explorer(tmp_path / "run", runner, Roles(function_backend(scripted_models.explorer), "t"),
                            list(load_dataset(dev_set)), ExploreConfig(iterations=2), progress=False)
        with pytest.raises(RunExists, match="--resume"):
            await explorer.run(resume=False)


def _sevex(*args: str, env=None, started: str = "terminal") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "trompe_agents.sevex.cli", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **STARTS[started])


def _normalised_tree(run: Path) -> list[dict]:
    """The tree without absolute paths, so two run folders compare equal."""
    text = (run / "tree.json").read_text().replace(str(run), "RUN")
    return json.loads(text)["nodes"]


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGKILL, -signal.SIGKILL), (signal.SIGTERM, 143)],
                         ids=["SIGKILL", "SIGTERM"])
def test_cli_resume_after_kill_matches_uninterrupted_run(tmp_path, dev_set, signum, status):
    """Killed outright, or stopped with SIGTERM by a script that started it (SIGINT ignored, no terminal): 143,
    one line saying how to resume, and --resume then ends as the uninterrupted run."""
    env = os.environ | {"PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    common = ["--task", "probes", "--dev", str(dev_set), "--explorer-backend", "function", "--explorer-model",
              "scripted_models:explorer", "--target-backend", "function", "--target-model",
              "scripted_models:target", "--iterations", "3", "--no-progress", "--concurrency", "2"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    done = _sevex("explore", *common, "--out", str(whole), env=env)
    assert done.wait(timeout=240) == 0, done.stdout.read()
    killed = _sevex("explore", *common, "--out", str(cut), env=env, started="script")
    deadline = time.time() + 120
    while time.time() < deadline:  # kill it once the first iteration's checkpoint is on disk
        state = cut / "state.json"
        if state.exists() and json.loads(state.read_text())["iteration"] >= 1:
            break
        time.sleep(0.05)
    killed.send_signal(signum)
    said = killed.communicate(timeout=120)[0]
    assert killed.returncode == status, said
    if signum == signal.SIGTERM:
        assert said.strip().splitlines()[-1] == (f"sevex: interrupted; the run is checkpointed, continue it with: "
                                                 f"sevex explore --out {cut} --resume")
    assert json.loads((cut / "state.json").read_text())["iteration"] < 3
    # --resume needs nothing but the folder: task, dev set, models and iterations come from run.json
    resumed = _sevex("explore", "--out", str(cut), "--resume", "--no-progress", env=env)
    assert resumed.wait(timeout=240) == 0, resumed.stdout.read()
    assert _normalised_tree(cut) == _normalised_tree(whole)
    assert "best dev accuracy 1.000" in resumed.stdout.read()

    # apply reproduces the best node's dev accuracy, from the run folder and from the saved prompt folder
    for source in (cut, cut / "best"):
        applied = _sevex("apply", str(source), "--dataset", str(dev_set), "--task", "probes", "--include-dev",
                         "--target-backend", "function", "--target-model", "scripted_models:target", "--no-progress",
                         env=env)
        assert applied.wait(timeout=120) == 0
        assert "accuracy 1.000 on 6 samples" in applied.stdout.read()

    shown = subprocess.run([sys.executable, "-m", "trompe_agents.sevex.cli", "show", str(cut)], env=env,
                           capture_output=True, text=True)
    assert shown.returncode == 0
    page = (cut / "report.html").read_text()
    assert page.count('id="node-') == len(_normalised_tree(cut)) and "best-line" in page


async def test_a_failing_engineer_fails_its_node_and_the_search_goes_on(tmp_path, dev_set):
    def broken_engineer(messages, tools):
        if "You are the Engineer" in messages[0].text:
            return "Sorry, I cannot write that."  # not JSON, even after the corrective retry
        return scripted_models.explorer(messages, tools)

    explorer, best = await explore(tmp_path / "run", dev_set, iterations=3, explorer=broken_engineer)
    tree = explorer.tree
    failed = [n for n in tree.executed() if n.id != 0]
    assert len(failed) == 3 and all("engineer: no usable reply" in n.experiment.failure for n in failed)
    assert best.id == 0
    # Each failure was replaced by a sibling, so the root still offers k=3 untried ideas.
    assert sum(not c.executed for c in tree.children(0)) == 3
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert [h["iteration"] for h in state["history"]] == [0, 1, 2, 3]
    assert [h["node"] for h in state["history"][1:]] == [n.id for n in failed]
    assert render(tmp_path / "run").count("failed: engineer: no usable reply") == 3  # the HTML view says why


async def test_an_ideator_without_ideas_spends_iterations_without_crashing(tmp_path, dev_set):
    def no_ideas(messages, tools):
        return {"ideas": []} if "You are the Ideator" in messages[0].text else scripted_models.explorer(
            messages, tools)

    explorer, best = await explore(tmp_path / "run", dev_set, iterations=2, explorer=no_ideas)
    assert list(explorer.tree.nodes) == [0] and best.id == 0
    assert explorer.tree.root.visits == 3  # each iteration went down to the root and asked for ideas again
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["iteration"] == 2 and [h["node"] for h in state["history"]] == [0, None, None]


async def test_resume_after_a_torn_checkpoint_or_an_exhausted_quota(tmp_path, dev_set):
    """A kill between writing state.json and tree.json, or a target out of quota, must not make --resume
    repeat, skip or mis-score work."""
    whole, _ = await explore(tmp_path / "whole", dev_set, iterations=2)
    await explore(tmp_path / "cut", dev_set, iterations=0)  # the root and its first ideas
    (tmp_path / "cut" / "tree.json").write_text((tmp_path / "whole" / "tree.json").read_text())  # out of step

    def no_quota(messages, tools):
        raise QuotaExhausted("target: you exceeded your current quota")

    with pytest.raises(QuotaExhausted):  # the run stops instead of scoring the idea 0
        await explore(tmp_path / "cut", dev_set, iterations=2, target=no_quota)
    assert json.loads((tmp_path / "cut" / "state.json").read_text())["iteration"] == 0
    resumed, _ = await explore(tmp_path / "cut", dev_set, iterations=2)
    assert _normalised_tree(tmp_path / "cut") == _normalised_tree(tmp_path / "whole")
    assert len(resumed.tree.executed()) == len(whole.tree.executed()) == 3


SCRIPTED = ["--explorer-backend", "function", "--explorer-model", "scripted_models:explorer", "--target-backend",
            "function", "--target-model", "scripted_models:target", "--no-progress"]


@pytest.mark.parametrize("bad, message", [
    (["--iterations", "-1"], "argument --iterations: expected an integer >= 0"),
    (["--dev-size", "0"], "argument --dev-size: expected an integer >= 1"),
    (["--concurrency", "0"], "argument --concurrency: expected an integer >= 1"),
    (["--k", "0"], "argument --k: expected an integer >= 1"),
    (["--timeout", "0"], "argument --timeout: expected seconds > 0"),
])
def test_cli_rejects_out_of_range_numbers_naming_the_argument(tmp_path, dev_set, capsys, bad, message):
    with pytest.raises(SystemExit):
        main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(tmp_path / "run"), *SCRIPTED, *bad])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_cli_zero_iterations_runs_only_the_baseline_and_resume_keeps_the_task(tmp_path, dev_set, capsys):
    run = tmp_path / "run"
    assert main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), "--iterations", "0",
                 *SCRIPTED]) == 0
    assert json.loads((run / "state.json").read_text())["iteration"] == 0  # not the default 50
    assert "best dev accuracy 0.500 (node 0" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="--task LineIntersections: .* is a probes run; --resume keeps its task"):
        main(["explore", "--out", str(run), "--resume", "--task", "LineIntersections", "--no-progress"])
