"""SEVEX reads every answer within bounds: a number past Python's digit limit, an answer over the size cap or
too slow to read fails its own sample (explore and --resume go on), and ask_lvlm shows the target at most
MAX_ASK_IMAGES images, within the target's image budget, with a clear error to the program beyond it."""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hostile_targets import HUGE_NUMBER
from imagekit import gradient
from PIL import Image
from sandbox_support import descendants
from sevex_support import TASK

from trompe_agents.backends.catalogue import LOCAL_IMAGES
from trompe_agents.backends.function import FunctionBackend
from trompe_agents.datasets import load_dataset
from trompe_agents.datasets.jsonl import write_jsonl
from trompe_agents.failures import ErrorKind
from trompe_agents.backends.model_images import ImagePolicy
from trompe_agents.replies import MAX_REPLY_CHARS, REPLY_TOO_LONG
from trompe_agents.sevex import scoring
from trompe_agents.sevex.cli import main
from trompe_agents.sevex.evaluate import Runner
from trompe_agents.sevex.explore import NAIVE
from trompe_agents.sevex.isolation import SandboxLimits
from trompe_agents.sevex.sandbox import Sandbox
from trompe_agents.sevex.tasks import Task
from trompe_agents.sevex.visual_api import MAX_ASK_IMAGES, SampleBridge
from trompe_agents.toolclient import ToolClient

SCRIPTED = ["--explorer-backend", "function", "--explorer-model", "scripted_models:explorer", "--target-backend",
            "function", "--no-progress"]


def scoring_children() -> set[int]:
    """Scoring children of this process still alive (read from /proc, not from the code under test)."""
    found = set()
    for pid in descendants():
        try:
            if b"trompe_agents.sevex.scoring" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.add(pid)
        except FileNotFoundError:
            continue
    return found


@pytest.fixture
def count_set(dev_set: Path) -> Path:
    """The red-square dev set, its gold answers made counts (1 square on the left, else 0), so answers are read
    as numbers, as LineIntersections' are."""
    samples = [replace(s, answer="1" if s.answer == "yes" else "0") for s in load_dataset(dev_set)]
    write_jsonl(samples, dev_set)
    return dev_set


@pytest.mark.os_sandbox
def test_explore_and_resume_score_a_number_past_the_digit_limit_as_no_answer(tmp_path, count_set, capsys):
    run = tmp_path / "run"
    common = ["--out", str(run), *SCRIPTED, "--target-model", "hostile_targets:huge_number"]
    assert main(["explore", "--task", "count-left", "--task-description", "Count the red squares on the left.",
                 "--dev", str(count_set), "--iterations", "0", *common]) == 0  # exited 2 before
    assert main(["explore", "--resume", "--iterations", "1", *common]) == 0
    state = json.loads((run / "state.json").read_text())
    assert state["iteration"] == 1
    results = [r for node in state["tree"]["nodes"] if node.get("experiment")
               for r in node["experiment"]["results"]]
    assert results and all(r["prediction"] is None and not r["correct"] for r in results)
    raw = [json.loads(line)["raw"] for line in (run / "nodes" / "0" / "results.jsonl").read_text().splitlines()]
    assert raw == [HUGE_NUMBER] * 6  # what the target said is kept, only not read as a count
    assert "best dev accuracy 0.000" in capsys.readouterr().out


async def test_long_answers_are_read_in_a_child_as_they_would_be_here():
    padded = "Counting the squares... " * 200 + "so there are {2} of them." + " " * 5_000
    assert len(padded) > scoring.INLINE_CHARS
    assert await scoring.score_bounded("auto", padded, "2", None) == scoring.Scored("2", True)
    assert scoring.score_text("auto", padded, "2", None) == ("2", True)
    assert await scoring.score_bounded("blink", "(B) " * 1_000, "B", ["x", "y"]) == scoring.Scored("B", True)
    assert await scoring.score_bounded("auto", HUGE_NUMBER, "2", None) == scoring.Scored(None, False)
    assert scoring_children() == set()


async def test_an_answer_over_the_cap_or_the_budget_is_its_samples_typed_failure(monkeypatch):
    over = await scoring.score_bounded("auto", "{2}" + " " * MAX_REPLY_CHARS, "2", None)
    assert (over.prediction, over.correct, over.kind) == (None, False, REPLY_TOO_LONG)
    assert f"over the {MAX_REPLY_CHARS:,}" in over.error
    monkeypatch.setattr(scoring, "SCORE_BUDGET_S", 0.001)  # no interpreter starts that fast
    slow = await scoring.score_bounded("auto", "{2}" + " " * scoring.INLINE_CHARS, "2", None)
    assert (slow.prediction, slow.correct, slow.kind) == (None, False, scoring.SCORE_BUDGET)
    assert "took over 0.001 s" in slow.error
    assert scoring_children() == set()  # the child was killed and reaped


@pytest.fixture
async def session(tmp_path):
    path = tmp_path / "q.png"
    gradient(64, 48).save(path)
    async with ToolClient.in_process() as tools:
        info = await tools.open_session({"original": path})
        yield tools, info.id


async def test_ask_lvlm_refuses_two_thousand_images_before_fetching_any(session):
    tools, sid = session
    asked = []
    bridge = SampleBridge(tools, sid, FunctionBackend(lambda messages, tools_: asked.append(messages) or "yes"))
    with pytest.raises(ValueError, match=f"ask_lvlm: 2000 images in one call; at most {MAX_ASK_IMAGES} per call"):
        await bridge.ask({"images": ["original"] * 2_000, "prompt": "Is it dark?"})
    with pytest.raises(TypeError, match="list of image ids"):
        await bridge.ask({"images": [{"id": "original"}], "prompt": "Is it dark?"})
    assert asked == [] and bridge.sent == []
    assert await bridge.ask({"images": ["original"] * MAX_ASK_IMAGES, "prompt": "Is it dark?"}) == "yes"
    assert len(asked[0][0].images) == MAX_ASK_IMAGES


async def test_ask_lvlm_sends_the_target_what_its_image_budget_allows(session):
    tools, sid = session
    shown = []
    target = FunctionBackend(lambda messages, tools_: shown.append(messages[0]) or "yes")
    target.images = ImagePolicy(replace(LOCAL_IMAGES, preview_side=32, max_images=3))  # a vendor's limits
    bridge = SampleBridge(tools, sid, target)
    assert await bridge.ask({"images": ["original"], "prompt": "Is it dark?"}) == "yes"
    preview = Image.open(io.BytesIO(shown[0].images[0].data))
    assert preview.size == (32, 24) and "preview of the full 64x48 image" in shown[0].text
    with pytest.raises(ValueError, match="4 images in one call; at most 3 per call"):
        await bridge.ask({"images": ["original"] * 4, "prompt": "Is it dark?"})


@pytest.mark.os_sandbox
async def test_an_answer_slow_to_read_never_makes_a_concurrent_healthy_sample_time_out(dev_set, monkeypatch):
    """Three replies are 99,000 newlines and no letter (the option-letter cues backtrack on them for minutes:
    20,000 took 23 s); the other three come after 2 s. Reading the slow ones while those wait must not stall
    the event loop past their 8 s wall-clock limit."""
    async def target(messages, tools_):
        image = Image.open(io.BytesIO(messages[-1].images[0].data)).convert("RGB")
        if image.getpixel((9, 15)) == (255, 0, 0):  # the square is on the left
            return "\n" * 99_000 + "I cannot tell."
        await asyncio.sleep(2)
        return "(B)"

    monkeypatch.setattr(scoring, "SCORE_BUDGET_S", 4.0)
    task = Task("left-or-right", "blink", "Is the red square on the left (A) or the right (B)?", "(A) or (B)",
                tags=TASK.tags)
    samples = [replace(s, answer="A" if s.answer == "yes" else "B", choices=["left", "right"])
               for s in load_dataset(dev_set)]
    async with Sandbox(SandboxLimits(wall_seconds=8), warm=2) as sandbox, ToolClient.in_process() as tools:
        runner = await Runner.create(tools, FunctionBackend(target), task, sandbox, concurrency=6)
        results = [e.result for e in await runner.evaluate(NAIVE, samples)]
    healthy = [r for r in results if r.label == "B"]
    assert [(r.error_kind, r.answer, r.right) for r in healthy] == [(None, "B", True)] * 3
    slow = [r for r in results if r.label == "A"]  # past the budget while the cues backtrack; never right
    assert len(slow) == 3 and all(r.failure in (scoring.SCORE_BUDGET, ErrorKind.NO_ANSWER) and not r.right
                                  for r in slow)
