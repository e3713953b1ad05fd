"""`claude --service-tier batch`: requests go out as Anthropic Message Batches through the real SDK to the loopback
fake, which speaks the Batches API as documented (platform.claude.com/docs/en/build-with-claude/batch-processing):
POST /v1/messages/batches creates a batch, GET /v1/messages/batches/{id} polls it until `ended`, its `results_url`
serves one JSON line per request, matched by `custom_id`. Batches are billed at half the standard price."""

from __future__ import annotations

import asyncio

import pytest
from imagekit import gradient
from test_vendor_rules import CROP, question
from trompe_agents.backends.base import BackendError, BackendOptions
from trompe_agents.backends.claude import ClaudeBackend, ClaudeSettings
from trompe_agents.backends.openai_responses import OpenAIResponsesBackend
from trompe_agents.costs import cost, parse_prices
from trompe_agents.datasets.base import Sample
from trompe_agents.illusion.agent import AgentConfig
from runlines import written
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.messages import Message, TextPart
from trompe_agents.testing import FakeVendor, Reply, Tokens
from trompe_agents.toolclient import ToolClient

MODEL = "claude-sonnet-5-5"
FAST = {"batch_window": 0.05, "batch_poll": 0}


def batched(fake: FakeVendor, model: str = MODEL, **settings) -> ClaudeBackend:
    return ClaudeBackend(BackendOptions(model=model, base_url=fake.base_url, api_key="k", max_retries=0,
                                        service_tier="batch", settings=ClaudeSettings(**{**FAST, **settings})))


def echo(body: dict, n: int) -> Reply:
    """Answers each request with its own question, so a mixed-up result would show."""
    asked = body["messages"][0]["content"][-1]["text"]
    return Reply(text=f"you asked: {asked}", usage=Tokens(input=1000, output=40, reasoning=0, cached=0))


def asking(text: str) -> list[Message]:
    return [Message("system", [TextPart("Be brief.")]), Message("user", [TextPart(text)])]


async def test_concurrent_requests_share_one_batch_and_each_gets_its_own_answer():
    with FakeVendor("anthropic", echo, batch_polls=2) as fake:
        async with batched(fake) as backend:
            turns = await asyncio.gather(*(backend.complete(asking(f"q{i}"), []) for i in range(3)))
        paths = [r.path for r in fake.requests]
    assert [t.message.text for t in turns] == ["you asked: q0", "you asked: q1", "you asked: q2"]
    assert list(fake.batches) == ["msgbatch_0000"]  # one batch for the three
    assert sum(p.startswith("/v1/messages/batches#") for p in paths) == 3  # each request inside it
    assert paths.count("/v1/messages/batches/msgbatch_0000") >= 3  # polled while in_progress, then ended
    assert paths[-1] == "/v1/messages/batches/msgbatch_0000/results"
    assert all(t.sent["service_tier"] == "batch" for t in turns)
    standard, batch = parse_prices(None)[MODEL], parse_prices(None, "batch")[MODEL]
    assert cost(turns[0].usage, MODEL, parse_prices(None, "batch")) == pytest.approx(
        cost(turns[0].usage, MODEL, parse_prices(None)) / 2)
    assert (batch.input, batch.output, batch.cache_read) == pytest.approx(
        (standard.input / 2, standard.output / 2, standard.cache_read / 2))


async def test_a_request_that_errored_in_the_batch_fails_like_the_direct_request_would():
    with FakeVendor("anthropic") as fake:
        async with batched(fake, model="fault-auth") as backend:
            with pytest.raises(BackendError, match="authentication_error") as caught:
                await backend.complete(question(), [])
    assert caught.value.kind == "auth" and list(fake.batches) == ["msgbatch_0000"]


async def test_a_no_tools_baseline_run_goes_through_batches_at_batch_prices(tmp_path):
    samples = []
    for i in range(2):
        gradient(32, 24).save(image := tmp_path / f"q{i}.png")
        samples.append(Sample(f"s{i}", [image], "Is it dark?", answer="no"))
    usage = Tokens(input=900, output=30, reasoning=0, cached=0)
    script = [Reply(text='{"reasons": "light", "answer": "no"}', usage=usage)]
    with FakeVendor("anthropic", script) as fake:
        async with ToolClient.in_process() as tools:
            await run_samples(samples, batched(fake), tools, AgentConfig(task=1, no_tools=True, router="regex"),
                              RunOptions(out=tmp_path / "run", concurrency=2, progress=False,
                                         prices=parse_prices(None, "batch")))
    records = written(tmp_path / "run")
    assert len(fake.batches) == 1 and {r["answer"] for r in records.values()} == {"no"}
    for record in records.values():
        assert record["service_tier"] == "batch"
        assert record["cost"] == pytest.approx((900 * 1.0 + 30 * 5.0) / 1e6)  # $2/$10 standard, halved


def test_only_claude_takes_the_batch_tier_and_the_others_say_so_in_one_line():
    with FakeVendor("responses") as fake:
        with pytest.raises(ValueError, match=r"openai: --service-tier must be standard or flex .*got 'batch'"):
            OpenAIResponsesBackend(BackendOptions(model="gpt-6.1-terra", base_url=fake.base_url, api_key="k",
                                                  service_tier="batch"))
    with FakeVendor("anthropic") as fake:
        with pytest.raises(ValueError, match="batch_poll=-1: expected a number of seconds >= 0"):
            batched(fake, batch_poll=-1)


async def test_a_request_with_tools_is_refused_on_the_batch_tier_without_being_sent():
    """A ReAct round would wait up to 24 hours for its own batch, every round: one line, nothing sent."""
    with FakeVendor("anthropic", [Reply(text="never")]) as fake:
        async with batched(fake) as backend:
            with pytest.raises(BackendError, match="fits single-request work .* add --no-tools") as caught:
                await backend.complete(question(), [CROP])
    assert caught.value.kind == "invalid_request" and fake.requests == [] and not fake.batches


def test_the_illusion_agent_refuses_batch_with_tools_before_any_request(tmp_path, capsys):
    from trompe_agents.illusion.cli import main as illusion_main

    gradient(32, 24).save(tmp_path / "q.png")
    with pytest.raises(SystemExit) as stop:
        illusion_main(["ask", "--backend", "claude", "--api-key-env", "NO_SUCH_KEY", "--service-tier", "batch",
                       str(tmp_path / "q.png"), "Is it dark?"])
    assert stop.value.code == 2
    assert "illusion-agent: --service-tier batch fits single-request work" in capsys.readouterr().err
