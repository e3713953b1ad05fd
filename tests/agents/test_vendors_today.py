"""The vendors as they are today: live defaults, --thinking per vendor, capability-driven requests, cache usage."""

from __future__ import annotations

import pytest
from test_vendor_roundtrip import VENDORS, backend_for
from trompe_agents.backends import catalogue
from trompe_agents.backends.catalogue import DEFAULTS, lookup
from trompe_agents.backends.claude import ClaudeBackend
from trompe_agents.backends.gemini import GeminiBackend
from trompe_agents.backends.openai_chat import OpenAIChatBackend
from trompe_agents.backends.openai_responses import OpenAIResponsesBackend
from trompe_agents.illusion.pricing import cost, parse_prices
from trompe_agents.messages import Message, TextPart, ToolCall, ToolSchema, Usage
from trompe_agents.testing import FakeVendor, Reply, Tokens, call, final

CROP = ToolSchema("crop", "Cut out a box.", {"type": "object", "properties": {"image": {"type": "string"}}})


def question() -> list[Message]:
    return [Message("system", [TextPart("Be brief.")]), Message("user", [TextPart("Look.")])]


@pytest.mark.parametrize("cls, backend", [(ClaudeBackend, "claude"), (OpenAIResponsesBackend, "openai"),
                                          (OpenAIChatBackend, "openai-chat"), (GeminiBackend, "gemini")])
def test_every_default_model_is_live_and_cites_the_vendor_page_it_was_checked_against(cls, backend):
    info = lookup(cls.default_model)
    assert cls.default_model == DEFAULTS[backend] and info.status == "active"
    assert info.source in catalogue.SOURCES.values() and info.source.startswith("https://")
    assert info.images is not None and info.price is not None


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-2.5-pro", "claude-sonnet-4-5"])
def test_retired_models_are_marked_with_their_replacement(model):
    info = lookup(model)
    assert info.status == "retired" and lookup(info.replacement).status == "active"


@pytest.mark.parametrize("alias, tool_images, temperature, status", [
    ("gemini-flash-latest", True, None, "active"), ("gemini-pro-latest", True, None, "active"),
    ("gemini-2.0-flash", True, None, "unlisted"), ("gemini-9-flash", True, None, "unknown")])
def test_gemini_aliases_get_their_models_rules_and_unlisted_names_the_vendors_defaults(alias, tool_images, temperature,
                                                                                     status):
    """An alias stands for its listed model; any other name (an old generation too: no prefix decides) gets Gemini's
    defaults until a user file says otherwise (`like = "gemini-2.5-flash-lite"`, docs/vendors.md)."""
    info = lookup(alias, "gemini")
    assert (info.tool_images, info.default_temperature, info.status) == (tool_images, temperature, status)


async def test_gemini_latest_alias_is_not_treated_as_2x_on_the_wire():
    with FakeVendor("gemini", [final("ok")]) as fake:
        async with backend_for("gemini-3", fake, model="gemini-flash-latest") as backend:
            turn = await backend.complete(question(), [CROP], final_schema={"type": "object"})
    config = fake.requests[0].json["generationConfig"]
    assert "temperature" not in config and config["responseMimeType"] == "application/json"
    assert turn.sent["tool_images"] == "function_response"


# (label, model, --thinking, what the request body must hold, max output tokens sent)
THINKING = [
    ("claude", "claude-sonnet-5-5", "high", {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}},
     4096 + 16384),
    ("claude", "claude-sonnet-5-5", "off", {"thinking": {"type": "between_tools"}, "output_config": {"effort": "low"}},
     4096),
    ("claude", "claude-sonnet-5", "off", {"thinking": {"type": "disabled"}}, 4096),
    ("claude", "claude-haiku-4-5", "medium", {"thinking": {"type": "enabled", "budget_tokens": 4096}}, 4096 + 4096),
    ("openai", "gpt-6.1-terra", "low", {"reasoning": {"effort": "low"}}, 4096 + 1024),
    ("openai", "gpt-6.1-terra", "off", {"reasoning": {"effort": "none"}}, 4096),
    ("openai", "gpt-5-mini", "off", {"reasoning": {"effort": "minimal"}}, 4096),
    ("openai-chat", "gpt-6.1-terra", "high", {"reasoning_effort": "none"}, 4096),  # function tools: none only
    ("gemini-3", "gemini-3.8-flash", "medium", {"generationConfig": {"thinkingConfig": {"thinkingLevel": "MEDIUM"}}},
     4096 + 4096),
    ("gemini-2.5", "gemini-2.5-flash-lite", "off", {"generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}},
     4096),
    # no --thinking: nothing sent, but a model that thinks by default still gets room for it
    ("claude", "claude-sonnet-5-5", None, {"thinking": {"type": "adaptive", "display": "summarized"}}, 4096 + 4096),
    ("claude", "claude-haiku-4-5", None, {}, 4096),
    ("openai", "gpt-6.1-terra", None, {}, 4096 + 4096),
    ("openai", "gpt-4.1-mini", None, {}, 4096),
]


def _holds(body: dict, expected: dict) -> bool:
    """`body` holds `expected`; key styles are compared loosely (google-genai sends `thinkingConfig.thinking_level`)."""
    loose = {k.replace("_", "").lower(): v for k, v in body.items()}
    keys = {k: k.replace("_", "").lower() for k in expected}
    return all(_holds(loose.get(keys[k], {}), v) if isinstance(v, dict) else loose.get(keys[k]) == v
               for k, v in expected.items())


def _max_output(body: dict) -> int:
    for key in ("max_tokens", "max_output_tokens", "max_completion_tokens"):
        if key in body:
            return body[key]
    return body["generationConfig"]["maxOutputTokens"]


@pytest.mark.parametrize("label, model, level, expected, budget", THINKING)
async def test_thinking_is_mapped_per_vendor_and_the_output_budget_makes_room_for_it(label, model, level, expected,
                                                                                    budget):
    with FakeVendor(VENDORS[label][1], [final("ok")]) as fake:
        async with backend_for(label, fake, model=model, thinking=level) as backend:
            turn = await backend.complete(question(), [CROP])
    body = fake.requests[0].json
    assert _holds(body, expected), body
    assert _max_output(body) == budget
    if label == "claude" and level not in ("off", None):
        assert "temperature" not in body  # Claude refuses a temperature next to thinking
    if level is None and not expected:
        assert not {"thinking", "reasoning", "reasoning_effort"} & set(body)
    assert turn.message.text == "ok"


@pytest.mark.parametrize("extra, base_url_is_proxy, limit, effort", [
    ({}, True, "max_completion_tokens", "medium"),  # OpenAI's model behind a proxy URL: still OpenAI's rules
    ({"api": "compatible"}, True, "max_tokens", None),
])
async def test_openai_chat_decides_by_capability_not_by_base_url(extra, base_url_is_proxy, limit, effort):
    with FakeVendor("chat", [final("ok")]) as fake:
        async with backend_for("openai-chat", fake, model="gpt-6.1-terra", thinking="medium",
                               settings=extra) as backend:
            turn = await backend.complete(question(), [])  # no tools: with them gpt-6.1-terra takes effort none only
    body = fake.requests[0].json
    assert limit in body and body.get("reasoning_effort") == effort
    assert "temperature" not in body or extra  # a reasoning model gets no temperature from OpenAI's rules
    assert turn.sent["api"] == ("compatible" if extra else "openai")


async def test_a_local_model_on_openai_chat_keeps_max_tokens_and_temperature_zero():
    with FakeVendor("chat", [final("ok")]) as fake:
        async with backend_for("openai-chat", fake, model="Qwen/Qwen3-VL-8B-Instruct") as backend:
            await backend.complete(question(), [CROP])
    body = fake.requests[0].json
    assert body["max_tokens"] == 4096 and body["temperature"] == 0 and "reasoning_effort" not in body


async def test_responses_echo_output_items_with_their_wire_names():
    with FakeVendor("responses", [call("crop", image="original"), final("done")]) as fake:
        async with backend_for("openai", fake, model="gpt-6.1-terra") as backend:
            messages = question()
            turn = await backend.complete(messages, [CROP])
            [c] = turn.message.tool_calls
            messages += [turn.message, Message("tool", [TextPart("img_001")], tool_call_id=c.id, tool_name=c.name)]
            await backend.complete(messages, [CROP])
    [echoed] = [i for i in fake.requests[1].json["input"] if i.get("type") == "function_call"]
    assert echoed["async"] is False and "async_" not in echoed


async def test_claude_cache_reads_and_writes_reach_usage_and_the_cost():
    tokens = Tokens(input=5000, output=100, reasoning=0, cached=3000, cache_write=1500)
    with FakeVendor("anthropic", [Reply(text="ok", usage=tokens)]) as fake:
        async with backend_for("claude", fake, model="claude-sonnet-5-5") as backend:
            turn = await backend.complete(question(), [CROP])
    assert turn.usage == Usage(input_tokens=5000, output_tokens=100, cached_tokens=3000, cache_write_tokens=1500)
    prices = parse_prices(["claude-sonnet-5-5=2,10,0.2,2.5"])
    assert cost(turn.usage, "claude-sonnet-5-5", prices) == pytest.approx(
        (500 * 2 + 3000 * 0.2 + 1500 * 2.5 + 100 * 10) / 1e6)


@pytest.mark.parametrize("raw", ["m=1", "m=1,2,3,4,5", "m=a,b", "m=-1,2", "=1,2"])
def test_a_bad_price_is_one_line_naming_the_option(raw):
    with pytest.raises(ValueError, match=r"--price must be MODEL=IN,OUT\[,CACHE_READ\[,CACHE_WRITE\]\]"):
        parse_prices([raw])


def test_a_model_snapshot_or_alias_is_priced_like_its_model():
    prices = parse_prices(None)
    usage = Usage(input_tokens=1000, output_tokens=10)
    assert cost(usage, "gpt-6.1-terra-2026-10-26", prices) == cost(usage, "gpt-6.1-terra", prices)
    assert cost(usage, "sonnet", prices) == cost(usage, "claude-sonnet-5-5", prices)
    assert cost(usage, "some-local-model", prices) is None


async def test_a_thinking_level_outside_the_range_is_refused_in_one_line():
    from trompe_agents.backends.base import BackendOptions

    with pytest.raises(ValueError, match="thinking must be one of off, low, medium, high; got 'max'"):
        ClaudeBackend(BackendOptions(model="claude-sonnet-5-5", api_key="k", thinking="max"))


def test_an_assistant_tool_call_history_is_still_sent_unchanged_with_thinking_off():
    """Elision never touches assistant messages (thinking blocks and signatures must go back as received)."""
    from trompe_agents.backends.model_images import ImagePolicy, prepare_messages

    assistant = Message("assistant", [TextPart("hm")], [ToolCall("c1", "crop", {})], vendor={"backend": "claude",
                                                                                             "payload": [1]})
    sent, _ = prepare_messages([*question(), assistant], ImagePolicy(catalogue.ANTHROPIC_IMAGES, keep_rounds=1))
    assert sent[-1] is assistant


async def test_sevex_explorer_thinks_and_target_does_not_unless_overridden(monkeypatch):
    from trompe_agents.sevex.cli import _backend, build_parser

    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    with FakeVendor("gemini", [final("ok")]) as fake:
        common = ["explore", "--out", "x", "--target-backend", "gemini", "--target-base-url", fake.base_url,
                  "--explorer-backend", "gemini", "--explorer-base-url", fake.base_url,
                  "--explorer-model", "gemini-3.8-flash", "--target-model", "gemini-3.8-flash"]
        args = build_parser().parse_args(common)
        explorer, target = _backend(args, "explorer"), _backend(args, "target")
        assert (explorer.thinking, target.thinking) == ("medium", "off")
        async with target:
            await target.complete(question(), [])
        overridden = _backend(build_parser().parse_args([*common, "--target-thinking", "high"]), "target")
        assert overridden.thinking == "high"
        await explorer.aclose()
        await overridden.aclose()
    [config] = [r.json["generationConfig"]["thinkingConfig"] for r in fake.requests]
    assert list(config.values()) == ["LOW"]  # Gemini 3.8 cannot switch thinking off and has no MINIMAL: LOW
