"""Cost is what the bill says: a run's cost equals what the fake vendor's usage bodies are billed, cache writes
included, priced independently by genai-prices from the raw bodies; cheaper modes reach the wire."""

from __future__ import annotations

import pytest
from genai_prices import calc_price, extract_usage
from test_vendor_rules import BACKENDS, CROP, backend, question
from trompe_agents.backends.catalogue import DEFAULTS
from trompe_agents.illusion.pricing import PRICES, cost, parse_prices
from trompe_agents.messages import Message, TextPart, Usage
from trompe_agents.testing import FakeVendor, Reply, Tokens, call

# genai-prices' provider id and API flavour for each fake's bodies
BILLED_AS = {"anthropic": ("anthropic", "default"), "responses": ("openai", "responses"),
             "chat": ("openai", "chat"), "gemini": ("google", "default")}
ROUNDS = [Tokens(input=6000, output=80, reasoning=40, cached=0, cache_write=5000),
          Tokens(input=7000, output=30, reasoning=10, cached=5000, cache_write=1500)]


def billed(kind: str, bodies: list[dict]) -> float:
    """What the vendor charges for these replies: genai-prices reads each raw usage body and prices it."""
    provider, flavour = BILLED_AS[kind]
    total = 0.0
    for body in bodies:
        found = extract_usage(body, provider_id=provider, api_flavor=flavour)
        total += float(calc_price(found.usage, found.model.id, provider_id=provider).total_price)
    return total


@pytest.mark.parametrize("name", list(BACKENDS))
async def test_a_runs_cost_equals_the_vendors_bill_including_cache_writes(name):
    kind = BACKENDS[name][1]
    script = [Reply(calls=call("crop", image="x").calls, usage=ROUNDS[0]), Reply(text="done", usage=ROUNDS[1])]
    with FakeVendor(kind, script) as fake:
        async with backend(name, fake) as b:
            messages = question()
            first = await b.complete(messages, [CROP])
            [c] = first.message.tool_calls
            messages += [first.message, Message("tool", [TextPart("ok")], tool_call_id=c.id, tool_name=c.name)]
            second = await b.complete(messages, [CROP])
        bill = billed(kind, fake.responses)
    usage = first.usage + second.usage
    writes = 0 if name == "gemini" else 6500  # Gemini caches implicitly and bills no writes
    assert (usage.cached_tokens, usage.cache_write_tokens) == (5000, writes)
    assert cost(usage, DEFAULTS[name], PRICES) == pytest.approx(bill, rel=1e-9)


def test_openai_cache_writes_are_billed_at_their_documented_rate():
    """gpt-6.1-terra: $1 input, $0.05 cached, $1.25 per 30-minute cache write, $5 output per million tokens."""
    usage = Usage(input_tokens=10_000, output_tokens=100, reasoning_tokens=50, cached_tokens=4000,
                  cache_write_tokens=3000)
    assert cost(usage, "gpt-6.1-terra", PRICES) == pytest.approx(
        (3000 * 1 + 4000 * 0.05 + 3000 * 1.25 + 150 * 5) / 1e6)


@pytest.mark.parametrize("name, field", [("openai", "service_tier"), ("openai-chat", "service_tier"),
                                         ("gemini", "serviceTier")])
async def test_flex_reaches_the_wire_and_is_priced_at_half(name, field):
    with FakeVendor(BACKENDS[name][1], [Reply(text="ok")]) as fake:
        async with backend(name, fake, service_tier="flex") as b:
            turn = await b.complete(question(), [CROP])
    body = fake.requests[0].json
    sent = body.get(field) or body.get("generationConfig", {}).get(field) or body.get("service_tier")
    assert str(sent).lower() == "flex" and turn.sent["service_tier"] == "flex"
    model = DEFAULTS[name]
    standard, flex = parse_prices(None)[model], parse_prices(None, "flex")[model]
    assert (flex.input, flex.output) == pytest.approx((standard.input / 2, standard.output / 2))


async def test_standard_sends_no_tier_and_claude_refuses_flex_in_one_line():
    with FakeVendor("responses", [Reply(text="ok")]) as fake:
        async with backend("openai", fake) as b:
            await b.complete(question(), [])
    assert "service_tier" not in fake.requests[0].json
    with pytest.raises(ValueError, match="claude: --service-tier must be standard"):
        with FakeVendor("anthropic") as fake:
            backend("claude", fake, service_tier="flex")


@pytest.mark.parametrize("name", ["openai", "openai-chat"])
async def test_openai_gets_one_prompt_cache_key_per_conversation(name):
    other = [Message("system", [TextPart("Be brief.")]), Message("user", [TextPart("Look again.")])]
    with FakeVendor(BACKENDS[name][1], [Reply(text="ok")]) as fake:
        async with backend(name, fake) as b:
            conversation = question()
            first = await b.complete(conversation, [CROP])
            await b.complete([*conversation, first.message, Message("user", [TextPart("More?")])], [CROP])
            await b.complete(other, [CROP])
        keys = [r.json.get("prompt_cache_key") for r in fake.requests]
        async with backend(name, fake, settings={"prompt_cache": False}) as b:
            await b.complete(question(), [])
    assert keys[0] == keys[1] != keys[2] and keys[0].startswith("trompe-")
    assert "prompt_cache_key" not in fake.requests[-1].json


async def test_a_local_server_gets_no_openai_only_fields():
    with FakeVendor("chat", [Reply(text="ok")]) as fake:
        async with backend("openai-chat", fake, model="Qwen/Qwen3-VL-8B-Instruct", service_tier="flex") as b:
            await b.complete(question(), [CROP])
    assert not {"prompt_cache_key", "service_tier", "reasoning_effort"} & set(fake.requests[0].json)
