"""Cost per role: an illusion sample's router, main and rescue agents each get the tokens the fake vendor billed
for their own requests (cache reads and writes, reasoning) and that usage's cost, in results.jsonl, summary.json and
the HTML report; SEVEX's roles get their cost on `sevex show`'s table."""

from __future__ import annotations

import pytest
from imagekit import gradient
from test_vendor_billing import billed
from trompe_agents.records import SampleResult
from trompe_agents.backends.base import BackendOptions
from trompe_agents.backends.claude import ClaudeBackend
from trompe_agents.costs import PRICES, cost, role_totals
from trompe_agents.datasets.base import Sample
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.export import summary
from trompe_agents.illusion.report import index_page
from runlines import results, written
from trompe_agents.illusion.runmeta import read_meta
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.messages import Usage
from trompe_agents.sevex.show import _cost_table, role_model
from trompe_agents.testing import FakeVendor, Reply, Tokens, call
from trompe_agents.toolclient import ToolClient

MODEL = "claude-sonnet-5-5"
# one request per role, in the order the agent makes them: classify, main's only round (a tool call, so main runs
# out of rounds), rescue's answer
BILLS = {"router": Tokens(input=3000, output=12, reasoning=0, cached=0, cache_write=2800),
         "main": Tokens(input=4200, output=60, reasoning=25, cached=2800, cache_write=1300),
         "rescue": Tokens(input=5000, output=30, reasoning=9, cached=4100, cache_write=800)}
SCRIPT = [Reply(text='{"category": "general"}', usage=BILLS["router"]),
          Reply(calls=call("draw_line", image="original", start=[0, 5], end=[40, 5]).calls, usage=BILLS["main"]),
          Reply(text='{"reasons": "the rows match", "answer": "yes"}', usage=BILLS["rescue"])]


def usage_of(tokens: Tokens) -> dict[str, int]:
    return {"input_tokens": tokens.input, "output_tokens": tokens.output, "reasoning_tokens": tokens.reasoning,
            "cached_tokens": tokens.cached, "cache_write_tokens": tokens.cache_write}


@pytest.fixture
async def record_and_bill(tmp_path):
    image = tmp_path / "q.png"
    gradient(48, 32).save(image)
    sample = Sample("s1", [image], "Are the two rows the same length?", answer="yes")
    out = tmp_path / "run"
    with FakeVendor("anthropic", SCRIPT) as fake:
        backend = ClaudeBackend(BackendOptions(model=MODEL, base_url=fake.base_url, api_key="k", max_retries=0))
        async with ToolClient.in_process() as tools:
            await run_samples([sample], backend, tools, AgentConfig(task=1, max_rounds=1, rescue_rounds=1),
                              RunOptions(out=out, progress=False))
        assert len(fake.responses) == 3
        bills = {role: billed("anthropic", [body]) for role, body in zip(BILLS, fake.responses)}
    return out, written(out)["s1"], bills


async def test_each_role_gets_the_tokens_and_cost_the_vendor_billed_for_it(record_and_bill):
    out, record, bills = record_and_bill
    assert record["agent"] == "rescue" and record["service_tier"] == "standard"
    assert list(record["roles"]) == ["router", "main", "rescue"]
    for role, entry in record["roles"].items():
        assert {k: entry[k] for k in usage_of(BILLS[role])} == usage_of(BILLS[role]), role
        assert entry["cost"] == pytest.approx(bills[role], rel=1e-9), role
    assert record["cost"] == pytest.approx(sum(bills.values()), rel=1e-9)  # the roles add up to the sample


async def test_the_summary_and_the_report_show_cost_per_role(record_and_bill):
    out, record, bills = record_and_bill
    totals = summary(read_meta(out), results([record]))["totals"]
    assert totals["service_tiers"] == ["standard"]
    assert totals["roles"]["main"]["cache_write_tokens"] == 1300
    assert totals["roles"]["rescue"]["cost"] == pytest.approx(bills["rescue"], abs=1e-6)
    page = index_page(read_meta(out), results([record]))
    assert "Cost per role" in page and f"<td>router</td><td>1</td><td>{3000:,}</td><td>0</td><td>{2800:,}</td>" in page


def test_role_totals_say_unknown_rather_than_a_partial_sum():
    priced = SampleResult("s1", roles={"main": {**usage_of(BILLS["main"]), "cost": 0.01}})
    unpriced = SampleResult("s2", roles={"main": {**usage_of(BILLS["main"]), "cost": None}})
    assert role_totals([priced, priced])["main"]["cost"] == pytest.approx(0.02)
    assert role_totals([priced, unpriced])["main"] == {"samples": 2, **{k: 2 * v for k, v in usage_of(
        BILLS["main"]).items()}, "image_tokens": None, "long": None, "cost": None}


def test_sevex_roles_are_priced_on_the_model_each_ran_on():
    run = {"explorer": {"backend": "claude", "model": MODEL}, "target": {"backend": "gemini", "model": None}}
    assert role_model(run, "engineer") == MODEL and role_model(run, "target") == "gemini-3.8-flash"
    usage = usage_of(BILLS["main"])
    table = _cost_table({"engineer": {**usage, "image_tokens": None}}, "role", run)
    expected = cost(Usage(**usage), MODEL, PRICES)
    assert f"<td>{usage['cache_write_tokens']:,}</td>" in table and f"${expected:.4f}" in table


def test_a_sevex_role_on_the_batch_tier_is_priced_at_batch_rates():
    usage = {**usage_of(BILLS["main"]), "image_tokens": None}
    standard = {"explorer": {"backend": "claude", "model": MODEL}}
    batch = {"explorer": {"backend": "claude", "model": MODEL, "service_tier": "batch"}}
    full = cost(Usage(**usage), MODEL, PRICES)
    assert f"${full:.4f}" in _cost_table({"analyst": usage}, "role", standard)
    assert f"${full / 2:.4f}" in _cost_table({"analyst": usage}, "role", batch)


async def test_a_sample_that_failed_truncated_still_counts_both_billed_replies(tmp_path):
    image = tmp_path / "q.png"
    gradient(48, 32).save(image)
    cut = Reply(text="The answer is", truncated=True, usage=BILLS["main"])
    with FakeVendor("anthropic", [cut]) as fake:
        backend = ClaudeBackend(BackendOptions(model=MODEL, base_url=fake.base_url, api_key="k", max_retries=0))
        async with ToolClient.in_process() as tools:
            await run_samples([Sample("s1", [image], "Same length?", answer="yes")], backend, tools,
                              AgentConfig(task=1, router="regex"), RunOptions(out=tmp_path / "run", progress=False))
        bill = billed("anthropic", fake.responses)
    record = written(tmp_path / "run")["s1"]
    assert record["error_kind"] == "truncated" and len(fake.responses) == 2
    assert record["usage"]["input_tokens"] == 2 * BILLS["main"].input
    assert record["roles"]["main"]["cost"] == pytest.approx(bill, rel=1e-9) == record["cost"]
