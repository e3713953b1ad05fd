"""The illusion agent on one sample: tool subsets per task, rescue on the same session, default, normalize."""

import io
import json

import numpy as np
import pytest
from PIL import Image, ImageDraw

from trompe_agents.backends.base import BackendError
from trompe_agents.backends.function import FunctionBackend
from trompe_agents.illusion.agent import AgentConfig, IllusionAgent, answer_schema
from trompe_agents.illusion.normalize import normalize_image
from trompe_agents.illusion.prompts import Prompts, parse_overrides
from trompe_agents.toolclient import ToolClient
from trompe_agents.trace import read_events

from .scripted import crops_forever_unless_rescue, line_then_yes, never_valid

ANALYSIS = {"overlay_grid", "extract_channel", "sample_color", "isolate_color", "blur"}


@pytest.fixture
def image(tmp_path):
    im = Image.new("RGB", (48, 32), "white")
    ImageDraw.Draw(im).ellipse([4, 4, 20, 20], fill="orange")
    path = tmp_path / "q.png"
    im.save(path)
    return path


@pytest.fixture
async def tools():
    async with ToolClient.in_process() as client:
        yield client


async def ask(tools, fn, image, trace, **config):
    agent = IllusionAgent(FunctionBackend(fn), tools, AgentConfig(**config))
    return await agent.answer([image], "Are the two circles the same size?", trace_dir=trace)


async def test_task_decides_which_tools_are_offered(tools, image, tmp_path):
    for task, expect_analysis in ((1, False), (2, True)):
        offered = []

        def spy(messages, tools_, task=task, offered=offered):
            offered.extend(t.name for t in tools_)
            return {"reasons": "r", "answer": "yes" if task == 1 else "B"}

        outcome = await ask(tools, spy, image, tmp_path / f"t{task}", task=task)
        assert {"draw_line", "crop", "compare_crops"} <= set(offered)
        assert bool(ANALYSIS & set(offered)) is expect_analysis
        assert outcome.agent == "main" and outcome.answer == ("yes" if task == 1 else "B")


async def test_prompt_carries_route_hint_and_lessons(tools, image, tmp_path):
    seen = {}

    def spy(messages, tools_):
        seen["system"], seen["user"] = messages[0].text, messages[1].text
        return {"reasons": "r", "answer": "no"}

    await ask(tools, spy, image, tmp_path / "t", task=1)
    assert "### size comparison" in seen["system"] and "Small numeric colour differences are real" in seen["system"]
    assert "Pre-router suggestion: category 'size comparison'" in seen["user"]
    route = [e for e in read_events(tmp_path / "t") if e["event"] == "route"][0]
    assert route["category"] == "size comparison" and route["agent"] == "router"


async def test_rescue_answers_on_the_same_session_when_main_hits_round_limit(tools, image, tmp_path):
    outcome = await ask(tools, crops_forever_unless_rescue, image, tmp_path / "t", task=1, max_rounds=4)
    assert outcome.agent == "rescue" and outcome.answer == "no"
    assert outcome.stops == {"main": "max_rounds", "rescue": "answer"}
    events = read_events(tmp_path / "t")
    rescue_results = [e for e in events if e["event"] == "tool_result" and e["agent"] == "rescue"]
    assert rescue_results and not rescue_results[0]["is_error"]  # img_003 made by main is still there
    assert rescue_results[0]["images"] == ["img_005"]  # numbering continues in the shared registry
    final = [e for e in events if e["event"] == "final"]
    assert len(final) == 1 and final[0]["agent"] == "rescue"
    rescue_start = [e for e in events if e["event"] == "start" and e["agent"] == "rescue"][0]
    assert rescue_start["max_rounds"] == 3


async def test_no_answer_is_invented_when_the_agent_never_answers_validly(tools, image, tmp_path):
    outcome = await ask(tools, never_valid, image, tmp_path / "t", task=2)
    assert outcome.agent is None and outcome.answer is None and outcome.error_kind == "invalid_answer"
    assert outcome.stops == {"main": "invalid_answer"}  # the rescue is for a spent round budget only
    final = [e for e in read_events(tmp_path / "t") if e["event"] == "final"]
    assert final[0]["answer"] is None and final[0]["error_kind"] == "invalid_answer"


async def test_main_answer_skips_rescue(tools, image, tmp_path):
    outcome = await ask(tools, line_then_yes, image, tmp_path / "t", task=1)
    assert outcome.agent == "main" and outcome.tool_calls == ["draw_line"] and "rescue" not in outcome.stops


def test_prompt_override_replaces_text_and_changes_hash(tmp_path):
    custom = tmp_path / "mine.md"
    custom.write_text("Only say yes.")
    prompts = Prompts(parse_overrides([str(custom), f"rescue={custom}"], task=2))
    assert prompts.system(2).startswith("Only say yes.") and prompts.rescue(2).startswith("Only say yes.")
    assert prompts.hashes()["task2"] != Prompts().hashes()["task2"]
    assert prompts.hashes()["task1"] == Prompts().hashes()["task1"]
    with pytest.raises(ValueError, match="no such file"):
        parse_overrides(["missing.md"], 1)


def squares_jpeg(quality=90):
    """Two flat grey squares 6 levels apart and a 1-px black line, JPEG-compressed."""
    im = Image.new("RGB", (96, 64), (200, 200, 200))
    draw = ImageDraw.Draw(im)
    draw.rectangle([10, 11, 41, 42], fill=(128, 128, 128))  # not on the 8x8 JPEG grid: ringing inside
    draw.rectangle([55, 11, 86, 42], fill=(134, 134, 134))
    draw.line([(0, 56), (95, 56)], fill=(0, 0, 0), width=1)
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=quality)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def test_normalize_flattens_jpeg_noise_but_keeps_real_differences_and_thin_lines():
    noisy = np.asarray(squares_jpeg(), dtype=int)
    fixed, stats = normalize_image(Image.fromarray(noisy.astype(np.uint8)))
    out = np.asarray(fixed, dtype=int)
    inside = [(slice(13, 41), slice(13, 40)), (slice(13, 41), slice(58, 85))]
    assert all(np.ptp(noisy[box]) > 2 for box in inside)  # JPEG left noise inside the flat squares
    assert all(np.ptp(out[box]) == 0 for box in inside)  # ...which is gone after snapping
    assert out[20, 20, 0] == 128 and out[20, 70, 0] == 134  # the real 6-level difference survives exactly
    assert out[56, 10:86].max() < 80  # the 1-px line is still dark
    assert 0 < stats.changed_fraction < 1 and stats.tolerance == 3


async def test_normalize_flag_changes_what_the_model_sees_and_is_traced(tools, tmp_path):
    path = tmp_path / "q.jpg"
    squares_jpeg().save(path, quality=95)
    seen = []

    def spy(messages, tools_):
        seen.append(messages[1].images[0].data)
        return {"reasons": "r", "answer": "no"}

    agent = IllusionAgent(FunctionBackend(spy), tools, AgentConfig(task=1, normalize=True))
    await agent.answer([path], "Are the two grey squares the same colour?", trace_dir=tmp_path / "t")
    shown = np.asarray(Image.open(io.BytesIO(seen[0])).convert("RGB"), dtype=int)
    expected = np.asarray(normalize_image(Image.open(path))[0], dtype=int)
    assert np.array_equal(shown, expected)
    event = [e for e in read_events(tmp_path / "t") if e["event"] == "normalize"][0]
    assert event["images"][0]["image"] == "original" and json.dumps(event["images"][0]["palette"])


async def test_a_backend_error_is_a_failure_with_its_kind_and_no_rescue(tools, image, tmp_path):
    def broken(messages, tools_):
        raise BackendError("vendor at http://x: m: auth: 401 authentication_error", kind="auth")

    outcome = await ask(tools, broken, image, tmp_path / "t", task=1)
    assert outcome.answer is None and outcome.agent is None and outcome.error_kind == "auth"
    assert outcome.stops == {"main": "error"} and any("401" in e for e in outcome.errors)


@pytest.mark.parametrize("count", [2, 3, 5, 8])
async def test_the_answer_schema_has_one_letter_per_real_option(tools, image, tmp_path, count):
    seen = []

    def answer_last_then_beyond(messages, tools_):
        seen.append(messages[0].text)
        beyond = "ABCDEFGHI"[count]  # one letter past the options: invalid, so corrected once
        return {"reasons": "r", "answer": beyond if len(seen) == 1 else "ABCDEFGH"[count - 1]}

    agent = IllusionAgent(FunctionBackend(answer_last_then_beyond), tools, AgentConfig(task=2))
    choices = [f"option {i}" for i in range(count)]
    outcome = await agent.answer([image], "Which one?", choices, trace_dir=tmp_path / "t")
    assert answer_schema(2, choices)["properties"]["answer"]["enum"] == list("ABCDEFGH"[:count])
    assert outcome.answer == "ABCDEFGH"[count - 1] and outcome.agent == "main" and len(seen) == 2


async def test_a_reply_in_the_datasets_own_format_is_an_answer_and_its_instructions_are_not_shown(
        tools, image, tmp_path):
    from trompe_agents.testing.dataset_files import TASK1_PROMPT

    shown = []

    def datacv_style(messages, tools_):
        shown.append(messages[1].text)
        return "<reasons>The lines measure the same.</reasons><answer>1</answer>"

    agent = IllusionAgent(FunctionBackend(datacv_style), tools, AgentConfig(task=1))
    outcome = await agent.answer([image], TASK1_PROMPT, trace_dir=tmp_path / "t")
    assert outcome.answer == "yes" and outcome.agent == "main" and outcome.reasons == "The lines measure the same."
    assert "Are the two black lines of equal length?" in shown[0] and "<answer>" not in shown[0]


def test_cli_reports_an_unreadable_image_in_one_line(tmp_path):
    from trompe_agents.illusion.cli import main

    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    with pytest.raises(SystemExit, match="illusion-agent ask: open_session"):
        main(["--backend", "function", "--model", "json:dumps", "ask", str(bad), "Is it?", "--trace",
              str(tmp_path / "t")])
