"""One reply cannot take over a run: the agent loop runs at most MAX_TOOL_CALLS calls of a reply, refuses a final
reply over the size cap as its own failure, and the illusion agent reads a hostile tag reply at once. Real
loops: the function backend and the in-process server through the MCP client."""

from __future__ import annotations

from alarmkit import alarm

from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.illusion.agent import AgentConfig, IllusionAgent
from trompe_agents.loop import MAX_TOOL_CALLS, run_agent
from trompe_agents.replies import MAX_REPLY_CHARS, REPLY_TOO_LONG

SCHEMA = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}}, "required": ["answer"],
          "additionalProperties": False}


async def ask(tools, decide, question_png):
    return await run_agent(FunctionBackend(decide), tools, system="You inspect images.",
                           question="Is the top-left corner dark?", images={"original": question_png},
                           final_schema=SCHEMA, max_rounds=3)


async def test_a_reply_with_ten_thousand_tool_calls_runs_only_the_cap_and_answers_the_rest_with_an_error(
        tools, question_png):
    calls = [tool_call("crop", image="original", box=[0, 0, 8, 8]) for _ in range(10_000)]
    seen = []

    def model(messages, tools_):
        seen.append(messages)
        return calls if len(seen) == 1 else {"answer": "yes"}

    result = await ask(tools, model, question_png)
    assert result.stop == "answer" and result.answer == {"answer": "yes"}
    assert result.tool_calls == ["crop"] * MAX_TOOL_CALLS  # only these reached the server ...
    assert len(result.refused) == 10_000 - MAX_TOOL_CALLS
    results = [m for m in seen[1] if m.role == "tool"]
    assert len(results) == 10_000  # ... and every call has its result, as the vendors require
    assert [r.is_error for r in results[:MAX_TOOL_CALLS]] == [False] * MAX_TOOL_CALLS
    assert all(r.is_error and f"at most {MAX_TOOL_CALLS} are run per reply" in r.text
               for r in results[MAX_TOOL_CALLS:])
    outputs = {p.id for r in results for p in r.images}
    assert len(outputs) == MAX_TOOL_CALLS  # img_001 .. img_016: no call past the cap made an image


async def test_a_final_reply_over_the_size_cap_is_its_own_failure_without_a_correction(tools, question_png):
    replies = []

    def model(messages, tools_):
        replies.append(messages)
        return '{"answer": "yes"}' + " " * MAX_REPLY_CHARS

    result = await ask(tools, model, question_png)
    assert (result.stop, result.answer, result.error_kind) == ("invalid_answer", None, REPLY_TOO_LONG)
    assert f"over the {MAX_REPLY_CHARS:,}" in result.error and len(replies) == 1


async def test_the_illusion_agent_reads_a_reasons_reply_of_newlines_at_once(tools, question_png, tmp_path):
    """A 3 KB `<reasons>` + newlines reply took 56 s a sample (routing, answer, correction); now milliseconds."""
    def model(messages, tools_):
        return "<reasons>" + "\n" * 3_000

    agent = IllusionAgent(FunctionBackend(model), tools, AgentConfig(task=1))
    with alarm(30):
        outcome = await agent.answer([question_png], "Are the two circles the same size?", trace_dir=tmp_path / "t")
    assert outcome.answer is None and outcome.error_kind == "invalid_answer"
