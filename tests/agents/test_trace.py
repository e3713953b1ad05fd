"""Traces a person can follow: JSONL events, PNG files by id, and a plain-text rendering."""

from __future__ import annotations

import io
import json

from imagekit import gradient, png_bytes
from PIL import Image

from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.loop import run_agent
from trompe_agents.messages import ImagePart, Message, TextPart, ToolCall, Turn, Usage
from trompe_agents.toolclient import ToolClient
from trompe_agents.trace import Trace, read_events, render_text

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


def test_each_image_is_saved_once_by_id(tmp_path):
    trace = Trace(tmp_path)
    first = ImagePart("img_001", png_bytes(gradient(8, 8)))
    assert trace.save_images([first]) == ["img_001"]
    trace.save_images([ImagePart("img_001", png_bytes(gradient(4, 4)))])  # same id: already saved
    assert Image.open(tmp_path / "images" / "img_001.png").size == (8, 8)
    trace.save_images([ImagePart("../evil", b"x", "image/jpeg")])
    assert (tmp_path / "images" / ".._evil.jpeg").read_bytes() == b"x"


def test_events_are_one_json_object_per_line_and_survive_reopening(tmp_path):
    trace = Trace(tmp_path)
    trace.message("main", Message("user", [TextPart("q"), ImagePart("original", png_bytes(gradient()))]))
    Trace(tmp_path).event("note", "rescue", reason="second look")  # another agent appends later
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["user", "note"]
    assert json.loads(lines[0])["images"] == ["original"]


def test_unparseable_arguments_are_kept_raw(tmp_path):
    trace = Trace(tmp_path)
    turn = Turn(Message("assistant", tool_calls=[ToolCall("c1", "crop", None, '{"box": [1,')]), Usage(5, 2), "m")
    trace.assistant("main", turn, "function", 0.1)
    event = read_events(tmp_path)[0]
    assert event["tool_calls"] == [{"id": "c1", "name": "crop", "arguments": None, "raw_arguments": '{"box": [1,'}]
    assert "<unparseable: '{\"box\": [1,'>" in render_text(tmp_path)


def test_rendered_trace_says_why_the_model_changed(tmp_path):
    """The JSONL keeps retries and fallbacks in `sent`; the text view must show them, not only a new model name."""
    turn = Turn(Message("assistant", [TextPart("ok")]), Usage(5, 2), "gpt-b")
    turn.sent = {"retries": [{"model": "gpt-a", "reason": "429 rate limited", "wait_s": 1.5}],
                 "model_switch": [{"from": "gpt-a", "to": "gpt-b", "reason": "quota exhausted: insufficient_quota"}],
                 "temperature_rejected": "400 temperature is not supported"}
    Trace(tmp_path).assistant("main", turn, "openai", 0.1)
    text = render_text(tmp_path)
    assert "! retried gpt-a after 1.5s: 429 rate limited" in text
    assert "! switched from gpt-a to gpt-b: quota exhausted: insufficient_quota" in text
    assert "! temperature dropped for the rest of the run: 400 temperature is not supported" in text


async def test_rendered_trace_tells_the_story(tmp_path):
    decide_steps = iter([tool_call("crop", image="original", box=[0, 0, 10, 10]),
                         tool_call("crop", image="img_999", box=[0, 0, 4, 4]), {"answer": 3}])
    im = io.BytesIO()
    gradient(40, 30).save(im, format="PNG")
    async with ToolClient.in_process() as tools:
        result = await run_agent(FunctionBackend(lambda messages, tools: next(decide_steps)), tools,
                                 system="Count things.", question="How many circles?",
                                 images={"original": im.getvalue()}, final_schema=SCHEMA,
                                 trace=Trace(tmp_path))
    text = render_text(result.trace_path)
    lines = text.splitlines()
    assert any("START backend=function" in line and "crop" in line for line in lines)
    assert "How many circles?" in text and "[images: original]" in text
    assert '-> crop({"image": "original", "box": [0, 0, 10, 10]})' in text
    assert "TOOL_RESULT crop  [images: img_001]" in text
    assert "TOOL_RESULT crop ERROR" in text and "img_999" in text
    assert 'stop=answer rounds=3' in text and '{"answer": 3}' in text
    assert len(text) < 4000  # readable: no image bytes inlined
