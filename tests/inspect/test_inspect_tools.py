"""trompe's image tools as Inspect tools (the `trompe/tool_loop` solver): Inspect runs the calls, the model sees
image ids and never the session, result images come back as Inspect image content, refusals as tool errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from inspect_scripts import USAGE

from trompe_agents.cli import main as trompe
from trompe_agents.illusion.router import CORE_TOOLS
from trompe_agents.testing import dataset_files as files

SEEN: list = []  # (tool names offered, parameter names) per request of the scripts below


def scripted(replies):
    """A mockllm script that plays `replies` in order (tool calls as (name, arguments)), recording the offer."""
    from inspect_ai.model import ModelOutput, ModelUsage

    turns = iter(replies)

    def play(messages, tools, tool_choice, config):
        SEEN.append(({t.name for t in tools}, {p for t in tools for p in t.parameters.properties}))
        reply = next(turns)
        output = (ModelOutput.for_tool_call("mockllm/model", *reply) if isinstance(reply, tuple)
                  else ModelOutput.from_content("mockllm/model", reply))
        output.usage = ModelUsage(**USAGE, total_tokens=sum(USAGE.values()))
        return output

    return play


async def loop_eval(tmp_path, replies, n: int = 1, **solver_args):
    from inspect_ai import eval_async
    from inspect_ai.model import get_model
    from inspect_ai.solver import SolverSpec

    SEEN.clear()
    dataset = files.write_datacv1(tmp_path / "data", n, answers=True)
    [log] = await eval_async("trompe/datacv_task1", task_args={"dataset": str(dataset)},
                             solver=SolverSpec("trompe/tool_loop", args_passed={"max_rounds": 3, **solver_args}),
                             model=get_model("mockllm/model", custom_outputs=scripted(replies)),
                             log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    return log


async def test_tool_results_come_back_as_images_after_their_id(tmp_path):
    from inspect_ai.model import ContentImage

    log = await loop_eval(tmp_path, [("crop", {"image": "original", "box": [0, 0, 8, 8], "zoom": 2}),
                                     json.dumps({"reasons": "the crop", "answer": "no"})])
    offered, params = SEEN[0]
    assert offered == set(CORE_TOOLS) and "session" not in params  # Task I's tools; the session is injected
    sample = log.samples[0]
    tool = next(m for m in sample.messages if m.role == "tool")
    assert tool.error is None and tool.function == "crop"
    texts = [c.text for c in tool.content if c.type == "text"]
    assert "img_001:" in texts
    images = [c for c in tool.content if isinstance(c, ContentImage)]
    assert len(images) == 1
    stored = images[0].image  # the log keeps images once, as attachments
    assert sample.attachments[stored.removeprefix("attachment://")].startswith("data:image/png;base64,")
    score = sample.scores["answer"]
    assert (score.answer, score.value) == ("no", "C")  # the first sample's label is 0: no
    assert trompe(["import-inspect", log.location, "--out", str(tmp_path / "run")]) == 0  # any solver's answers
    [record] = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert (record["answer"], record["correct"], record["agent"]) == ("no", True, "inspect")


async def test_a_refused_call_is_a_tool_error_the_model_reads(tmp_path):
    log = await loop_eval(tmp_path, [("crop", {"image": "img_009", "box": [0, 0, 8, 8]}),
                                     "I cannot tell, but the answer is yes."])
    tool = next(m for m in log.samples[0].messages if m.role == "tool")
    assert tool.error is not None and "img_009" in tool.error.message
    assert log.samples[0].scores["answer"].answer == "yes"  # free text, read the benchmark's way


async def test_rounds_end_after_max_rounds_without_an_answer(tmp_path):
    crop = ("crop", {"image": "original", "box": [0, 0, 4, 4]})
    log = await loop_eval(tmp_path, [crop, crop, crop, crop])
    sample = log.samples[0]
    assert sum(m.role == "assistant" for m in sample.messages) == 3
    assert sample.scores["answer"].value == "I" and sample.scores["answer"].answer is None


async def test_tools_over_a_stdio_server(tmp_path):
    server = f"{Path(sys.executable).parent / 'trompe-server'} --tools core"  # a subprocess speaking stdio
    replies = [("crop", {"image": "original", "box": [0, 0, 8, 8]}), '{"reasons": "", "answer": "no"}']
    log = await loop_eval(tmp_path, replies, server_cmd=server)
    tool = next(m for m in log.samples[0].messages if m.role == "tool")
    assert tool.error is None and any(c.type == "image" for c in tool.content)


def test_one_server_only():
    from trompe.tools import tool_loop

    with pytest.raises(ValueError, match="server_url and server_cmd: give one"):
        tool_loop(server_url="http://127.0.0.1:1/mcp", server_cmd="trompe-server")
