"""A question without an image (HallusionBench has 178): answered from its text, with no session and no tools,
instead of failing as "images is empty" and being counted as a failed sample."""

import pytest

from trompe_agents.backends.function import FunctionBackend
from trompe_agents.illusion.agent import AgentConfig, IllusionAgent
from trompe_agents.toolclient import ToolClient
from trompe_agents.trace import read_events

SEEN: list = []


def text_only_model(messages, tools):
    """Records what it was offered, then answers 'no'."""
    SEEN.append((len(tools), [len(m.images) for m in messages]))
    return {"reasons": "from the text", "answer": "no"}


@pytest.fixture
async def tools():
    async with ToolClient.in_process() as client:
        yield client


@pytest.mark.parametrize("router", ["regex", "model"])
async def test_a_text_only_question_is_answered_without_a_session_or_tools(tools, tmp_path, router):
    SEEN.clear()
    agent = IllusionAgent(FunctionBackend(text_only_model), tools, AgentConfig(task=1, router=router))
    outcome = await agent.answer([], "Is the Eiffel Tower taller than the Statue of Liberty?", trace_dir=tmp_path / "t")
    assert outcome.answer == "no" and outcome.agent == "main" and outcome.error_kind is None
    answering = SEEN[-1]
    assert answering[0] == 0 and sum(answering[1]) == 0, "no tools and no images may be offered"
    events = read_events(tmp_path / "t")
    start = next(e for e in events if e["event"] == "start")
    assert start["tools"] == [] and start["session"] == ""
    user = next(e for e in events if e["event"] == "user")
    assert "without an image" in user["text"] and user["images"] == []


async def test_a_sample_with_images_still_gets_its_session_and_tools(tools, tmp_path):
    from PIL import Image

    path = tmp_path / "q.png"
    Image.new("RGB", (32, 16), "white").save(path)
    SEEN.clear()
    agent = IllusionAgent(FunctionBackend(text_only_model), tools, AgentConfig(task=1, router="regex"))
    outcome = await agent.answer([path], "Are the two lines the same length?")
    assert outcome.answer == "no"
    assert SEEN[-1][0] > 0 and sum(SEEN[-1][1]) == 1
