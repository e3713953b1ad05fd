"""Long-context surcharges, per request: a request whose prompt is over its model's threshold in genai-prices' data
(Claude Haiku 5.5 over 100k input tokens, GPT-6.1 over 272k, Gemini 3.1 Pro over 200k) is billed whole at the higher
rate, the rounds under it at the base rate, even though a sample's usage is summed over its rounds."""

from __future__ import annotations

from dataclasses import asdict, replace

import pytest
from test_vendor_billing import billed
from test_vendor_rules import BACKENDS, CROP, backend, question
from trompe_agents.backends.catalogue import lookup
from trompe_agents.illusion.pricing import PRICES, cost, parse_prices
from trompe_agents.messages import Message, TextPart, Usage
from trompe_agents.testing import FakeVendor, Reply, Tokens, call

# backend -> a model of it with a long-context tier, and its threshold (input tokens of one request)
TIERED = {"claude": ("claude-haiku-5-5", 100_000), "openai": ("gpt-6.1-terra", 272_000),
          "openai-chat": ("gpt-6.1-terra", 272_000), "gemini": ("gemini-3.1-pro-preview", 200_000)}


def rounds(threshold: int) -> list[Tokens]:
    """A long first round just over the threshold, then a short one; together well over it."""
    return [Tokens(input=threshold + 1, output=90, reasoning=30, cached=0, cache_write=0),
            Tokens(input=threshold // 2, output=40, reasoning=0, cached=0, cache_write=0)]


@pytest.mark.parametrize("name", list(BACKENDS))
async def test_only_the_request_over_the_threshold_is_billed_at_the_long_context_rate(name):
    kind, (model, threshold) = BACKENDS[name][1], TIERED[name]
    long, short = rounds(threshold)
    script = [Reply(calls=call("crop", image="x").calls, usage=long), Reply(text="done", usage=short)]
    with FakeVendor(kind, script) as fake:
        async with backend(name, fake, model=model) as b:
            messages = question()
            first = await b.complete(messages, [CROP])
            [c] = first.message.tool_calls
            messages += [first.message, Message("tool", [TextPart("ok")], tool_call_id=c.id, tool_name=c.name)]
            second = await b.complete(messages, [CROP])
        bill = billed(kind, fake.responses)  # genai-prices, on each raw usage body
    assert first.usage.long == replace(first.usage, long=None) and second.usage.long is None
    usage = first.usage + second.usage
    assert usage.long == first.usage.long and usage.input_tokens > threshold
    assert cost(usage, model, PRICES) == pytest.approx(bill, rel=1e-9)
    flat = replace(usage, long=None)  # the same tokens, as if no request had crossed the threshold
    assert cost(usage, model, PRICES) > cost(flat, model, PRICES) * 1.5  # input x2 over the threshold (x5 Haiku)


def test_a_prompt_of_exactly_the_threshold_is_billed_at_the_base_rate():
    """genai-prices' cliff applies above the tier's start, not at it."""
    price = PRICES["gpt-6.1-terra"]
    assert (price.long_above, price.long.input, price.long.output) == (272_000, 2.0, 7.5)
    at = Usage(input_tokens=272_000, output_tokens=1000)
    assert cost(at, "gpt-6.1-terra", PRICES) == pytest.approx((272_000 * 1.0 + 1000 * 5.0) / 1e6)
    over = Usage(input_tokens=272_001, output_tokens=1000)
    marked = replace(over, long=over)
    assert cost(marked, "gpt-6.1-terra", PRICES) == pytest.approx((272_001 * 2.0 + 1000 * 7.5) / 1e6)


def test_a_long_context_mark_survives_a_record_and_a_flat_price_override():
    """Records keep `long` as a dict and read it back; --price gives one flat rate, which then applies to all."""
    over = Usage(input_tokens=300_000, output_tokens=10)
    usage = replace(over, long=over) + Usage(input_tokens=1000, output_tokens=10)
    assert Usage(**asdict(usage)) == usage
    table = parse_prices(["gpt-6.1-terra=1,5"])
    assert cost(usage, "gpt-6.1-terra", table) == pytest.approx((301_000 * 1 + 20 * 5) / 1e6)


def test_a_batch_or_flex_discount_applies_to_the_long_context_rate_too():
    haiku = lookup("claude-haiku-5-5")
    standard, batch = haiku.price_for(""), haiku.price_for("batch")
    assert batch.long_above == standard.long_above == 100_000
    assert (batch.long.input, batch.long.output) == pytest.approx((standard.long.input / 2, standard.long.output / 2))


def test_every_tiered_catalogue_model_has_one_threshold_the_price_knows():
    """A second tier in the data would make the model's price unknown (never billed at the wrong cliff)."""
    assert all(PRICES[model].long_above == threshold for model, threshold in TIERED.values())
