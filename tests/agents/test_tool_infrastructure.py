"""Failures of the tool server's side end the sample; the model never reads them as tool errors.

A real in-process server whose session is closed behind the agent's back (as an eviction by another
client's open, or an expiry, would do); tests/server/test_redis_faults.py does the same with real replicas,
a real Redis and killed processes.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image

from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.illusion.agent import AgentConfig, IllusionAgent
from trompe_agents.loop import run_agent
from trompe_agents.toolclient import ToolClient, ToolInfrastructureError

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


class LosesItsSession:
    """Crops once, then its session disappears on the server and it crops again; a tool error would make it
    answer 'made up' (what an agent does when shown the infrastructure's errors)."""

    def __init__(self, tools: ToolClient):
        self.tools, self.shown = tools, []

    def __call__(self, messages, tools):
        results = [m for m in messages if m.role == "tool"]
        self.shown += [m.text for m in results if m.is_error]
        if any(m.is_error for m in results):
            return {"reasons": "a tool failed", "answer": "made up"}
        if not results:
            return tool_call("crop", image="original", box=[0, 0, 8, 8])
        registry = self.tools._app.registry
        for session in registry.session_ids():
            registry.close_session(session)  # evicted: the server no longer knows it
        return tool_call("crop", image="original", box=[0, 0, 4, 4])


@pytest.fixture
def png():
    buffer = io.BytesIO()
    Image.new("RGB", (24, 24), "white").save(buffer, "PNG")
    return buffer.getvalue()


async def test_a_lost_session_fails_the_run_instead_of_reaching_the_model(png):
    async with ToolClient.in_process() as tools:
        model = LosesItsSession(tools)
        with pytest.raises(ToolInfrastructureError, match="crop: the tool server lost this sample's session"):
            await run_agent(FunctionBackend(model), tools, system="s", question="q", images={"original": png},
                            final_schema=SCHEMA, tags=["core"])
    assert model.shown == []


async def test_the_illusion_agent_records_it_as_a_tool_infrastructure_failure(png, tmp_path):
    image = tmp_path / "q.png"
    image.write_bytes(png)
    async with ToolClient.in_process() as tools:
        model = LosesItsSession(tools)
        agent = IllusionAgent(FunctionBackend(model), tools, AgentConfig(task=1, router="regex", tags=["core"]))
        outcome = await agent.answer([image], "Is the line straight?")
    assert outcome.answer is None and outcome.error_kind == "tool_infrastructure"
    assert "lost this sample's session" in outcome.errors[0]
    assert model.shown == [] and outcome.refused == []
