"""Each vendor's documented thinking rule per model, on the wire: Claude's preserved thinking kept valid under
`--keep-images N` (the fake Anthropic vendor checks each returned thinking block's prefix and answers the documented
400, platform.claude.com/docs/en/build-with-claude/preserved-thinking), Haiku 5.5's `--thinking off` next to tools
and a JSON output format (platform.claude.com/docs/en/build-with-claude/prompt-engineering/prompting-claude-haiku-5-5,
"Use adaptive thinking with JSON output and your own tools")."""

from __future__ import annotations

import json

import pytest
from imagekit import gradient
from test_vendor_roundtrip import SCHEMA, VENDORS, backend_for
from trompe_agents.backends.base import BackendError
from trompe_agents.loop import run_agent
from trompe_agents.messages import Message, TextPart, ToolSchema
from trompe_agents.trace import Trace
from trompe_agents.testing import FakeVendor, Reply, call, final

BOX = [8, 4, 24, 20]
THREE_ROUNDS = [Reply(thinking=f"step {n}", calls=call("crop", image="original", box=BOX).calls) for n in range(3)] \
    + [Reply(thinking="done", text='```json\n{"answer": "no"}\n```')]


async def crop_three_times(tools, tmp_path, keep_images):
    gradient(64, 48).save(tmp_path / "q.png")
    trace = Trace(tmp_path / f"trace-{keep_images}")
    with FakeVendor("anthropic", THREE_ROUNDS) as fake:
        async with backend_for("claude", fake, model="claude-sonnet-5-5", thinking="high",
                               keep_images=keep_images) as backend:
            result = await run_agent(backend, tools, system="You inspect images.", question="Is it dark?",
                                     images={"original": tmp_path / "q.png"}, final_schema=SCHEMA, max_rounds=6,
                                     trace=trace)
    return result, fake


def dropped_per_round(result) -> list[int]:
    """What each model round's trace event says it left out of the thinking sent back (`thinking_dropped`)."""
    events = [json.loads(line) for line in result.trace_path.read_text().splitlines()]
    return [e["sent"].get("thinking_dropped", 0) for e in events if e["event"] == "assistant"]


def thinking_sent(body: dict) -> list[str]:
    return [b["thinking"] for m in body["messages"] if m["role"] == "assistant" for b in m["content"]
            if b["type"] == "thinking"]


async def test_keep_images_with_thinking_never_sends_a_block_whose_prefix_changed(tools, tmp_path):
    """With every image kept the history only grows, so every block goes back; with --keep-images 1 an image turns
    into a stub each round, and the blocks after it are left out (the fake would answer 400 otherwise)."""
    kept, fake = await crop_three_times(tools, tmp_path, None)
    assert kept.stop == "answer" and thinking_sent(fake.requests[3].json) == ["step 0", "step 1", "step 2"]
    elided, fake = await crop_three_times(tools, tmp_path, 1)
    assert elided.stop == "answer" and len(fake.requests) == 4  # no 400 on the way
    sent = [thinking_sent(r.json) for r in fake.requests]
    assert sent[1] == ["step 0"] and sent[3] != ["step 0", "step 1", "step 2"]
    # the trace says so: each round counts the blocks it left out, and they are what was not sent
    assert dropped_per_round(kept) == [0, 0, 0, 0]
    dropped = dropped_per_round(elided)
    assert dropped[:2] == [0, 0] and all(n > 0 for n in dropped[2:])
    assert [len(s) + n for s, n in zip(sent, dropped)] == [0, 1, 2, 3]
    assert any("[image" in str(r.json["messages"]) for r in fake.requests[2:])  # images were elided all the same


async def test_the_fake_refuses_a_thinking_block_sent_back_after_its_prefix_changed():
    from trompe_agents.backends.claude import ClaudeBackend

    with FakeVendor("anthropic", [Reply(thinking="hm", calls=call("crop", image="original", box=BOX).calls),
                                  final("ok")]) as fake:
        async with backend_for("claude", fake, model="claude-sonnet-5-5") as backend:
            turn = await backend.complete([Message("user", [TextPart("Look.")])], [])
            assert isinstance(backend, ClaudeBackend)
            history = [Message("user", [TextPart("Look again.")]), turn.message,  # an edited first turn
                       Message("tool", [TextPart("cropped")], tool_call_id=turn.message.tool_calls[0].id)]
            with pytest.raises(BackendError, match="messages.1.content.0: Invalid `signature` in `thinking` block. "
                                                   "The block is bound to a different conversation"):
                await backend.complete(history, [])


CROP = ToolSchema("crop", "Cut out a box.", {"type": "object", "properties": {"image": {"type": "string"}}})


@pytest.mark.parametrize("tools, schema, thinking", [
    ([CROP], SCHEMA, {"type": "adaptive", "display": "summarized"}),  # the guide's combination: adaptive, low
    ([CROP], None, {"type": "disabled"}),
    ([], SCHEMA, {"type": "disabled"}),
])
async def test_haiku_5_5_thinking_off_next_to_tools_and_json_output_thinks_adaptively(tools, schema, thinking):
    with FakeVendor("anthropic", [final("ok")]) as fake:
        async with backend_for("claude", fake, model="claude-haiku-5-5", thinking="off") as backend:
            await backend.complete([Message("user", [TextPart("Look.")])], tools, final_schema=schema)
    body = fake.requests[0].json
    assert body["thinking"] == thinking
    assert body.get("output_config", {}).get("effort") == ("low" if thinking["type"] == "adaptive" else None)


@pytest.mark.parametrize("model, asked, sent", [
    ("gpt-6.1-terra", "off", "none"), ("gpt-6.2-sol", "off", "low"), ("gpt-6.2-sol", "high", "high"),
    ("gpt-6.3-sol", "off", "low"),  # unlisted: OpenAI's defaults, which have no `none`
])
async def test_gpt_6_efforts_come_from_the_catalogue_not_a_prefix(model, asked, sent):
    with FakeVendor("responses", [final("ok")]) as fake:
        async with backend_for("openai", fake, model=model, thinking=asked) as backend:
            await backend.complete([Message("user", [TextPart("Look.")])], [])
    assert fake.requests[0].json["reasoning"]["effort"] == sent


@pytest.mark.parametrize("tier, given, expected", [("flex", [], 900.0), ("flex", ["--timeout", "120"], 120.0),
                                                   ("flex", ["--timeout", "300"], 300.0), ("standard", [], 120.0)])
def test_the_flex_tier_gets_a_fifteen_minute_timeout_unless_the_user_gives_one(tier, given, expected):
    """OpenAI: "increase default timeout to 15 minutes" (developers.openai.com/api/docs/guides/flex-processing); a
    user who writes `--timeout 120` keeps 120 (the default's value, but given)."""
    import argparse
    from dataclasses import replace

    from trompe_agents.cliopts import add_backend_args, backend_options_from_args

    parser = argparse.ArgumentParser(prog="x")
    add_backend_args(parser)
    for backend, label in (("openai", "openai"), ("gemini", "gemini-3")):
        cls, _, model = VENDORS[label]
        args = parser.parse_args(["--backend", backend, "--model", model, "--service-tier", tier, *given])
        assert cls(replace(backend_options_from_args(args, "x"), api_key="k")).deadline == expected


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_openai_chat_records_a_local_servers_reasoning_in_the_trace(field):
    """vLLM returns `reasoning_content` (docs.vllm.ai, Reasoning Outputs), Ollama `reasoning`, beside the answer."""
    with FakeVendor("chat", [Reply(text="yes", thinking="The rows look equal.", reasoning_field=field)]) as fake:
        async with backend_for("openai-chat", fake) as backend:
            turn = await backend.complete([Message("user", [TextPart("Same?")])], [])
    assert fake.responses[0]["choices"][0]["message"][field] == "The rows look equal."
    assert turn.sent["narration"] == "The rows look equal." and turn.message.text == "yes"
