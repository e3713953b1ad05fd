"""Each backend's default model x every --thinking level, captured on the loopback fake and checked against the
vendor's documented rules; the fakes refuse (400) what the real APIs refuse.

Rules and their sources (also in backends/models.toml and testing/fake_vendors.py `refusal`):
- OpenAI Chat Completions, GPT-5.6+ / GPT-6: function tools only with `reasoning_effort: "none"`, also refused when
  it is left out (raw-API captures: BerriAI/litellm#34569, livekit/agents#7169, fazer-ai/agents#66).
- Claude Sonnet 5.5: the lowest setting is `thinking: {"type": "between_tools"}` (at low, medium or high effort),
  `disabled` is a 400, sampling parameters are refused, and thinking text shows with `display: "summarized"`
  (platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5).
- Gemini 3.8 Flash: thinking levels LOW, MEDIUM, HIGH only (docs.cloud.google.com/gemini-enterprise-agent-platform/
  models/guides/gemini-3-8-flash); Google advises the default temperature on Gemini 3.
"""

from __future__ import annotations

import json

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors, types
from imagekit import gradient
from test_vendor_roundtrip import BOX, SCHEMA, tool_result_images
from trompe_agents.backends.base import BackendError, BackendOptions
from trompe_agents.backends.catalogue import DEFAULTS, THINKING_BUDGET
from trompe_agents.backends.claude import ClaudeBackend
from trompe_agents.backends.gemini import GeminiBackend
from trompe_agents.backends.openai_chat import OpenAIChatBackend
from trompe_agents.backends.openai_responses import OpenAIResponsesBackend
from trompe_agents.loop import run_agent
from trompe_agents.messages import Message, TextPart, ToolSchema
from trompe_agents.testing import FakeVendor, Reply, call, final
from trompe_agents.trace import Trace

CROP = ToolSchema("crop", "Cut out a box.", {"type": "object", "properties": {"image": {"type": "string"}}})
BACKENDS = {"claude": (ClaudeBackend, "anthropic"), "openai": (OpenAIResponsesBackend, "responses"),
            "openai-chat": (OpenAIChatBackend, "chat"), "gemini": (GeminiBackend, "gemini")}
LEVELS = [None, "off", "low", "medium", "high"]


def question() -> list[Message]:
    return [Message("system", [TextPart("Be brief.")]), Message("user", [TextPart("Look.")])]


def backend(name: str, fake: FakeVendor, settings: dict | None = None, **options):
    """The backend against the fake vendor; `settings`: its own, as `--backend-option` pairs."""
    cls, _ = BACKENDS[name]
    options.setdefault("max_retries", 0)
    return cls(BackendOptions(model=options.pop("model", DEFAULTS[name]), base_url=fake.base_url, api_key="k",
                              settings=cls.Settings.from_pairs(settings or {}), **options))


def thinking_config(body: dict) -> dict:
    config = body.get("generationConfig", {})
    return config.get("thinkingConfig") or config.get("thinking_config") or {}


def expected_request(name: str, level: str | None) -> dict:
    """What the default model must receive, per the rules in the module docstring."""
    budget = 4096 + THINKING_BUDGET[level or "medium"]  # no --thinking: the model's default effort, about medium
    if name == "claude":
        if level == "off":
            return {"thinking": {"type": "between_tools"}, "effort": "low", "max_tokens": 4096}
        return {"thinking": {"type": "adaptive", "display": "summarized"}, "effort": level, "max_tokens": budget}
    if name == "openai":
        return {"effort": level and ("none" if level == "off" else level),
                "max_output_tokens": 4096 if level == "off" else budget}
    if name == "openai-chat":  # function tools on gpt-6.1-terra: none, whatever was asked
        return {"reasoning_effort": "none", "max_completion_tokens": 4096}
    return {"thinking_level": level and {"off": "LOW"}.get(level, level.upper()), "max_output_tokens": budget}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", list(BACKENDS))
async def test_every_default_model_gets_a_request_its_vendor_accepts_at_every_thinking_level(name, level):
    with FakeVendor(BACKENDS[name][1], [final("ok")]) as fake:
        async with backend(name, fake, thinking=level) as b:
            turn = await b.complete(question(), [CROP])  # a refused request would raise here
        [request] = fake.requests
    body, want = request.json, expected_request(name, level)
    assert turn.message.text == "ok" and request.model == DEFAULTS[name]
    if name == "claude":
        assert body["thinking"] == want["thinking"] and body.get("output_config", {}).get("effort") == want["effort"]
        assert body["max_tokens"] == want["max_tokens"] and "temperature" not in body
    elif name == "openai":
        assert body.get("reasoning", {}).get("effort") == want["effort"]
        assert body["max_output_tokens"] == want["max_output_tokens"] and "temperature" not in body
    elif name == "openai-chat":
        assert body["reasoning_effort"] == "none" and body["max_completion_tokens"] == 4096
        asked = {None: "default", "off": None}.get(level, level)
        assert turn.sent.get("reasoning_effort_asked") == asked  # the trace says what --thinking was overridden
    else:
        level_sent = thinking_config(body).get("thinkingLevel") or thinking_config(body).get("thinking_level")
        assert level_sent == want["thinking_level"] and level_sent != "MINIMAL"
        assert body["generationConfig"]["maxOutputTokens"] == want["max_output_tokens"]
        assert "temperature" not in body["generationConfig"]


def test_the_fakes_refuse_what_the_vendors_refuse():
    """The loopback fakes answer the documented 400s, read through the vendors' own SDKs."""
    tool = {"type": "function", "function": {"name": "crop", "parameters": {"type": "object"}}}
    with FakeVendor("chat") as fake:
        client = openai.OpenAI(base_url=fake.base_url, api_key="k", max_retries=0)
        for effort in ({}, {"reasoning_effort": "low"}):
            with pytest.raises(openai.BadRequestError, match="set reasoning_effort to 'none'") as refused:
                client.chat.completions.create(model="gpt-6.1-terra", messages=[{"role": "user", "content": "hi"}],
                                               tools=[tool], **effort)
            assert refused.value.body["param"] == "reasoning_effort"
        client.chat.completions.create(model="gpt-6.1-terra", messages=[{"role": "user", "content": "hi"}],
                                       tools=[tool], reasoning_effort="none")
    with FakeVendor("anthropic") as fake:
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="between_tools"):
            client.messages.create(model="claude-sonnet-5-5", max_tokens=10, thinking={"type": "disabled"},
                                   messages=[{"role": "user", "content": "hi"}])
        client.messages.create(model="claude-sonnet-5", max_tokens=10, thinking={"type": "disabled"},
                               messages=[{"role": "user", "content": "hi"}])  # still fine before 5.5
    with FakeVendor("gemini") as fake:
        client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=fake.base_url))
        config = types.GenerateContentConfig(thinking_config=types.ThinkingConfig(thinking_level="MINIMAL"))
        with pytest.raises(errors.ClientError, match="LOW, MEDIUM, HIGH"):
            client.models.generate_content(model="gemini-3.8-flash", contents="hi", config=config)
        client.models.generate_content(model="gemini-3.6-flash", contents="hi", config=config)  # 3.6 has MINIMAL


async def test_a_refused_request_is_a_clear_invalid_request_error():
    """openai-chat told the server is not OpenAI (api=compatible) sends no effort: the fake refuses, in one line."""
    with FakeVendor("chat", [final("ok")]) as fake:
        async with backend("openai-chat", fake, settings={"api": "compatible"}) as b:
            with pytest.raises(BackendError, match="invalid_request: 400 .*reasoning_effort to 'none'") as failed:
                await b.complete(question(), [CROP])
    assert failed.value.kind == "invalid_request"


async def test_openai_chat_answers_a_sample_with_tools_on_its_default_model(tools, tmp_path):
    image = tmp_path / "q.png"
    gradient(64, 48).save(image)
    script = [call("crop", image="original", box=BOX), final('Dark.\n```json\n{"answer": "no"}\n```')]
    with FakeVendor("chat", script) as fake:
        async with backend("openai-chat", fake, thinking="high") as b:
            result = await run_agent(b, tools, system="You inspect images.", question="Is the corner dark?",
                                     images={"original": image}, final_schema=SCHEMA, max_rounds=4)
        assert (result.stop, result.answer, result.tool_calls) == ("answer", {"answer": "no"}, ["crop"])
        assert [r.json["reasoning_effort"] for r in fake.requests] == ["none", "none"]
        assert [r.model for r in fake.requests] == ["gpt-6.1-terra"] * 2
        [png] = tool_result_images("openai-chat", fake.requests[1].json)
    assert png


async def test_sonnet_5_5_narration_between_tool_calls_reaches_the_trace(tools, tmp_path):
    image = tmp_path / "q.png"
    gradient(64, 48).save(image)
    script = [Reply(thinking="Cropping the corner to compare it.", calls=call("crop", image="original",
                                                                              box=BOX).calls),
              final('{"answer": "yes"}')]
    trace = Trace(tmp_path / "trace")
    with FakeVendor("anthropic", script) as fake:
        async with backend("claude", fake) as b:
            await run_agent(b, tools, system="You inspect images.", question="Is the corner dark?",
                            images={"original": image}, final_schema=SCHEMA, max_rounds=4, trace=trace)
        assert fake.requests[0].json["thinking"] == {"type": "adaptive", "display": "summarized"}
        echoed = [b for m in fake.requests[1].json["messages"] if m["role"] == "assistant" for b in m["content"]]
    assert echoed[0] == fake.responses[0]["content"][0]  # sent back unchanged, signature included
    assert echoed[0]["thinking"] == "Cropping the corner to compare it."
    events = [json.loads(line) for line in trace.path.read_text().splitlines()]
    narrated = [e["sent"].get("narration") for e in events if e["event"] == "assistant"]
    assert narrated[0] == "Cropping the corner to compare it." and narrated[1] is None
