"""The ReAct loop with the function backend running real tools on an in-process server."""

from __future__ import annotations

import io
import re

import pytest
from imagekit import gradient
from PIL import Image
from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.loop import run_agent
from trompe_agents.messages import ToolCall
from trompe_agents.toolclient import ToolInfrastructureError
from trompe_agents.trace import Trace, read_events

SCHEMA = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}}, "required": ["answer"],
          "additionalProperties": False}
BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{200,}")


def scripted(*steps):
    """A model that replays steps in order and records every conversation it was shown."""
    seen = []

    def decide(messages, tools):
        seen.append(list(messages))
        step = steps[min(len(seen) - 1, len(steps) - 1)]
        return step(messages) if callable(step) else step

    decide.seen = seen
    return decide


async def run(tools, decide, question_png, tmp_path=None, **kwargs):
    kwargs.setdefault("max_rounds", 5)
    return await run_agent(FunctionBackend(decide), tools, system="You inspect images.",
                           question="Is the top-left corner dark?", images={"original": question_png},
                           final_schema=SCHEMA, trace=Trace(tmp_path / "trace") if tmp_path else None, **kwargs)


async def test_tool_images_reach_the_model_and_the_trace(tools, question_png, tmp_path):
    decide = scripted(tool_call("crop", image="original", box=[0, 0, 16, 12], zoom=2),
                      "Dark indeed.\n```json\n{\"answer\": \"yes\"}\n```")
    result = await run(tools, decide, question_png, tmp_path)
    assert (result.stop, result.answer, result.rounds, result.tool_calls) == ("answer", {"answer": "yes"}, 2,
                                                                              ["crop"])
    first_user = decide.seen[0][1]
    assert "`original` (64x48 px)" in first_user.text and "img_001" in first_user.text
    assert "Is the top-left corner dark?" in first_user.text
    assert [p.id for p in first_user.images] == ["original"]
    tool_message = decide.seen[1][-1]
    assert tool_message.role == "tool" and tool_message.tool_name == "crop" and not tool_message.is_error
    crop = Image.open(io.BytesIO(tool_message.images[0].data))
    assert (tool_message.images[0].id, crop.size) == ("img_001", (32, 24))
    expected = gradient(64, 48).crop((0, 0, 16, 12)).resize((32, 24), Image.Resampling.NEAREST)
    assert crop.convert("RGB").tobytes() == expected.tobytes()

    events = read_events(result.trace_path)
    kinds = [e["event"] for e in events]
    assert kinds == ["start", "system", "user", "assistant", "tool_result", "assistant", "answer"]
    assert events[2]["images"] == ["original"] and events[4]["images"] == ["img_001"]
    assert events[3]["tool_calls"][0]["arguments"] == {"image": "original", "box": [0, 0, 16, 12], "zoom": 2}
    assert events[-1]["answer"] == {"answer": "yes"}
    assert all(e["agent"] == "main" for e in events)
    saved = {p.name: Image.open(p).size for p in (tmp_path / "trace" / "images").iterdir()}
    assert saved == {"original.png": (64, 48), "img_001.png": (32, 24)}
    assert not BASE64_RUN.search(result.trace_path.read_text())


async def test_session_is_closed_after_the_run(tools, question_png):
    result = await run(tools, scripted({"answer": "no"}), question_png)
    assert result.stop == "answer"
    with pytest.raises(ToolInfrastructureError, match="lost this sample's session"):
        await tools.call(result.session, "list_images", {})


async def test_malformed_arguments_go_back_to_the_model(tools, question_png):
    broken = ToolCall("call_x", "crop", None, '{"image": "original", "box": [0, 0')
    decide = scripted(broken, {"answer": "no"})
    result = await run(tools, decide, question_png)
    feedback = decide.seen[1][-1]
    assert feedback.is_error and feedback.tool_call_id == "call_x"
    assert "not valid JSON" in feedback.text and '"box": [0, 0' in feedback.text
    assert result.stop == "answer"


async def test_unknown_tool_is_answered_with_the_available_ones(tools, question_png):
    decide = scripted(tool_call("zoom_in", image="original"), {"answer": "no"})
    result = await run(tools, decide, question_png, allow=["crop"])
    feedback = decide.seen[1][-1]
    assert feedback.is_error and "unknown tool 'zoom_in'" in feedback.text and "available: crop" in feedback.text
    assert result.stop == "answer"


async def test_tool_not_in_allow_list_is_refused_even_if_the_server_has_it(tools, question_png):
    decide = scripted(tool_call("view_image", image="original"), {"answer": "no"})
    await run(tools, decide, question_png, allow=["crop"])
    assert decide.seen[1][-1].is_error and "unknown tool 'view_image'" in decide.seen[1][-1].text


async def test_tool_error_reaches_the_model_and_the_sample_goes_on(tools, question_png, tmp_path):
    decide = scripted(tool_call("crop", image="original", box=[10, 10, 5, 5]),
                      tool_call("crop", image="original", box=[0, 0, 5, 5]), {"answer": "yes"})
    result = await run(tools, decide, question_png, tmp_path)
    error = decide.seen[1][-1]
    assert error.is_error and "box" in error.text
    assert decide.seen[2][-1].images[0].id == "img_001"  # the failed call created nothing
    assert result.stop == "answer" and result.tool_calls == ["crop"] and result.refused == ["crop"]  # executed apart
    results = [e for e in read_events(result.trace_path) if e["event"] == "tool_result"]
    assert [r["is_error"] for r in results] == [True, False]


async def test_round_limit(tools, question_png):
    decide = scripted(lambda messages: tool_call("crop", image="original", box=[0, 0, 8, 8]))
    result = await run(tools, decide, question_png, max_rounds=3)
    assert (result.stop, result.answer, result.rounds) == ("max_rounds", None, 3)
    assert result.tool_calls == ["crop"] * 3
    assert "3 rounds" in result.error


async def test_invalid_answer_gets_one_correction(tools, question_png):
    decide = scripted("I think yes.", "Sure: {\"answer\": \"yes\"} -- final.")
    result = await run(tools, decide, question_png)
    correction = decide.seen[1][-1]
    assert correction.role == "user" and "not valid" in correction.text and '"enum"' in correction.text
    assert (result.stop, result.answer) == ("answer", {"answer": "yes"})


async def test_invalid_answer_twice_gives_up(tools, question_png):
    decide = scripted({"answer": "maybe"})
    result = await run(tools, decide, question_png)
    assert (result.stop, result.answer, result.rounds) == ("invalid_answer", None, 2)
    assert "answer" in result.error and "maybe" in result.error


async def test_failing_backend_ends_the_sample_with_an_error(tools, question_png):
    def decide(messages, tools):
        raise RuntimeError("vendor is down")

    result = await run(tools, decide, question_png)
    assert result.stop == "error" and "vendor is down" in result.error


async def test_second_agent_continues_on_the_same_session(tools, question_png, tmp_path):
    trace = Trace(tmp_path / "trace")
    info = await tools.open_session({"original": question_png})
    first = await run_agent(FunctionBackend(scripted(tool_call("crop", image="original", box=[0, 0, 8, 8]),
                                                     {"answer": "no"})),
                            tools, system="s", question="q", final_schema=SCHEMA, trace=trace, session=info.id)
    rescue = scripted(tool_call("view_image", image="img_001"), {"answer": "yes"})
    second = await run_agent(FunctionBackend(rescue), tools, system="s", question="check again",
                             final_schema=SCHEMA, trace=trace, session=info.id, agent_name="rescue")
    assert first.session == second.session == info.id
    assert rescue.seen[1][-1].images[0].id == "img_001"  # made by the first agent
    assert "`original` (64x48 px)" in rescue.seen[0][1].text
    assert {e["agent"] for e in read_events(trace.path)} == {"main", "rescue"}
    assert not (await tools.call(info.id, "list_images", {})).is_error  # reused sessions stay open


async def test_continuing_agent_is_told_of_every_input_even_one_named_like_an_output(tools, question_png):
    info = await tools.open_session({"original": question_png, "img_a": question_png})
    await tools.call(info.id, "crop", {"image": "original", "box": [0, 0, 8, 8]})
    decide = scripted({"answer": "yes"})
    await run_agent(FunctionBackend(decide), tools, system="s", question="q", final_schema=SCHEMA, session=info.id)
    intro = decide.seen[0][1].text
    assert "`original` (64x48 px)" in intro and "`img_a` (64x48 px)" in intro and "`img_001`" not in intro.split(
        "Tools never")[0]


async def test_bad_max_rounds_is_refused(tools, question_png):
    with pytest.raises(ValueError, match="max_rounds"):
        await run(tools, scripted({"answer": "no"}), question_png, max_rounds=0)


async def test_trace_holds_usage_and_backend(tools, question_png, tmp_path):
    result = await run(tools, scripted({"answer": "no"}), question_png, tmp_path)
    events = read_events(result.trace_path)
    start, assistant = events[0], events[3]
    assert start["backend"] == "function" and "decide" in start["model"] and "crop" in start["tools"]
    assert assistant["usage"]["input_tokens"] == 0 and assistant["seconds"] >= 0
