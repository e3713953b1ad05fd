"""Batch runs end to end: a probe set through a fake Gemini API, scoring, resume after a real kill."""

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from trompe_agents.backends.base import BackendOptions
from trompe_agents.backends.function import FunctionBackend
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.pricing import PRICES
from trompe_agents.backends.ratelimit import RateLimiter
from runlines import as_lines, written
from trompe_agents.illusion.runmeta import read_meta
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.plugins import create_backend
from trompe_agents.testing import FakeVendor, call, final, tool_results
from trompe_agents.toolclient import ToolClient
from trompe_agents.trace import read_events

from .scripted import LINE, line_then_yes

HERE = Path(__file__).parent


def gemini_script(body, n):
    """First turn of each sample: a reference line on the original; after the tool result: 'yes'."""
    if tool_results("gemini", body):
        return final('{"reasons": "compared with the reference", "answer": "yes"}')
    return call("draw_line", **LINE)


async def test_probe_run_through_fake_gemini_traces_images_and_scores(probes, tmp_path):
    out = tmp_path / "run"
    with FakeVendor("gemini", gemini_script) as vendor:
        backend = create_backend("gemini", BackendOptions(model="gemini-3-flash-preview", base_url=vendor.base_url,
                                                          api_key="test", max_retries=0))
        async with ToolClient.in_process() as tools:
            records = as_lines(await run_samples(probes, backend, tools, AgentConfig(task=1, router="regex"),
                                        RunOptions(out=out, concurrency=4, progress=False)))
    assert len(vendor.requests) == 2 * len(probes)
    assert len(records) == len(probes) == len(written(out))
    for sample in probes:
        record = records[sample.id]
        assert record["answer"] == "yes" and record["agent"] == "main"
        assert record["correct"] is (sample.answer == "yes")  # scored against the probe's ground truth
        assert record["family"] == sample.metadata["family"]
        assert record["counterfactual"] == sample.metadata["counterfactual"]
        images = out / record["trace"] / "images"
        original = np.asarray(Image.open(sample.images[0]).convert("RGB"))
        assert np.array_equal(np.asarray(Image.open(images / "original.png").convert("RGB")), original)
        drawn = np.asarray(Image.open(images / "img_001.png").convert("RGB"))
        assert tuple(drawn[5, 20]) == (255, 0, 0)  # the scripted reference line is where it was asked for
        untouched = np.ones(original.shape[:2], bool)
        untouched[4:7, :42] = False
        assert np.array_equal(drawn[untouched], original[untouched])
        usage = record["usage"]
        assert (usage["input_tokens"], usage["output_tokens"], usage["reasoning_tokens"]) == (200, 40, 10)
        price = PRICES["gemini-3-flash-preview"]  # cached prompt tokens are billed at the cache-read rate
        expected = (180 * price.input + usage["cached_tokens"] * price.cache_read + 50 * price.output) / 1e6
        assert usage["cached_tokens"] == 20 and abs(record["cost"] - expected) < 1e-12
    assert {s.answer for s in probes} == {"yes", "no"}  # both outcomes were really scored
    meta = read_meta(out)
    assert meta["backend"] == "gemini" and meta["normalize"] is False and set(meta["prompts"]) >= {"task1"}


async def test_per_sample_errors_are_recorded_and_the_run_goes_on(probes, tmp_path):
    probes[2].images = [tmp_path / "vanished.png"]
    out = tmp_path / "run"
    async with ToolClient.in_process() as tools:
        records = as_lines(await run_samples(probes[:4], FunctionBackend(line_then_yes), tools, AgentConfig(task=1),
                                    RunOptions(out=out, concurrency=2, progress=False)))
    assert len(records) == 4
    broken = records[probes[2].id]
    assert broken["answer"] is None and "vanished.png" in broken["error"] and broken["error_kind"] == "run"
    assert all(records[s.id]["answer"] == "yes" for s in probes[:4] if s is not probes[2])


def run_cli(probe_dir, out, gate, model="gated_line_then_yes"):
    """A run whose model answers three samples, then hangs until killed unless `gate` exists (or `model`)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
           "TROMPE_TEST_GATE": str(gate)}
    cmd = [sys.executable, "-m", "trompe_agents.illusion.cli", "--backend", "function",
           "--model", f"scripted:{model}", "run", "--dataset", str(probe_dir), "--task", "1",
           "--out", str(out), "--concurrency", "2", "--no-progress"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def lines(out):
    path = out / "results.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def test_killed_run_resumes_with_exactly_one_result_per_sample(probe_dir, probes, tmp_path):
    out, gate = tmp_path / "run", tmp_path / "gate"
    proc = run_cli(probe_dir, out, gate)
    deadline = time.monotonic() + 120  # a generous bound for a stuck run, not a timing check
    while len(lines(out)) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)  # polling a condition: three answers written, the rest hang until the kill
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = [json.loads(line) for line in lines(out) if line.endswith("}")]  # a cut-off line never counts
    assert len(before) == 3, "the kill should land mid-run"

    gate.touch()
    proc = run_cli(probe_dir, out, gate)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr.decode()
    after = [json.loads(line) for line in lines(out)]
    assert sorted(r["id"] for r in after) == sorted(s.id for s in probes)  # each sample exactly once
    assert after[: len(before)] == before  # finished samples were neither repeated nor rewritten
    for record in after:
        events = read_events(out / record["trace"])
        assert [e["event"] for e in events].count("final") == 1  # an interrupted trace was started afresh
    assert len(read_meta(out)["invocations"]) == 2
    assert "8 results" in stdout.decode()


async def test_concurrency_bounds_samples_in_flight(probes, tmp_path):
    """Three samples at once, never more. The first ones wait for a third to start (up to a minute, which only a
    bound below three would use up), so the bound is reached however slow the machine: at a load of 24 a sample
    once ended before the third began, and a peak of 2 was measured."""
    in_flight, peak = 0, 0
    full = asyncio.Event()

    async def tracked(messages, tools):
        nonlocal in_flight, peak
        if messages[-1].role == "user":
            in_flight += 1
            peak = max(peak, in_flight)
            if in_flight == 3:
                full.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(full.wait(), 60)
        reply = line_then_yes(messages, tools)
        if isinstance(reply, dict):
            in_flight -= 1
        return reply

    async with ToolClient.in_process() as tools:
        await run_samples(probes, FunctionBackend(tracked), tools, AgentConfig(task=1, router="regex"),
                          RunOptions(out=tmp_path / "a", concurrency=3, progress=False))
        assert peak == 3
        records = as_lines(await run_samples(probes[:3], FunctionBackend(tracked), tools,
                                    AgentConfig(task=1, router="regex"),
                                    RunOptions(out=tmp_path / "b", concurrency=3, rate_limit=1200, progress=False)))
    assert all(r["answer"] == "yes" for r in records.values()) and len(records) == 3
    assert json.loads((tmp_path / "b" / "run.json").read_text())["invocations"][0]["rate_limit"] == 1200


async def test_rate_limit_spaces_request_starts_evenly():
    """1200 requests a minute: one every 50 ms across all samples, on a clock the test moves (no timing)."""
    now, starts = [100.0], []

    async def sleep(seconds):  # the request would start once this much time has passed
        starts.append(now[0] + seconds)

    limiter = RateLimiter(1200, clock=lambda: now[0], sleep=sleep)
    await asyncio.gather(*(limiter.wait() for _ in range(4)))
    assert starts == pytest.approx([100.0, 100.05, 100.1, 100.15])
    now[0] = 100.12  # a request made before the last slot has passed waits for the next one
    await limiter.wait()
    assert starts[-1] == pytest.approx(100.2)
    now[0] = 130.0  # after a quiet spell the next request goes at once
    await limiter.wait()
    assert starts[-1] == 130.0


async def test_every_vendor_runs_the_agent_and_sends_the_answer_schema(probes, tmp_path):
    kinds = {"claude": "anthropic", "openai": "responses", "openai-chat": "chat", "gemini": "gemini"}
    for backend_name, kind in kinds.items():
        def script(body, n, kind=kind):
            if tool_results(kind, body):
                return final('{"reasons": "r", "answer": "no"}')
            return call("draw_line", **LINE)

        with FakeVendor(kind, script) as vendor:
            backend = create_backend(backend_name, BackendOptions(model="m", base_url=vendor.base_url,
                                                                  api_key="test", max_retries=0))
            async with ToolClient.in_process() as tools:
                records = as_lines(await run_samples(probes[:2], backend, tools, AgentConfig(task=1),
                                            RunOptions(out=tmp_path / backend_name, progress=False)))
        assert [r["answer"] for r in records.values()] == ["no", "no"], backend_name
        assert all(r["tool_calls"] == ["draw_line"] and r["agent"] == "main" for r in records.values())
        sent = json.dumps(vendor.bodies)
        assert "enum" in sent and "draw_line" in sent and "compare_crops" in sent, backend_name
        assert "sample_color" not in sent, backend_name  # Task I never offers analysis tools


async def test_recorded_run_replays_offline_with_the_same_results(probes, tmp_path):
    cassette = tmp_path / "cassette.jsonl"
    with FakeVendor("gemini", gemini_script) as vendor:
        recorder = create_backend("gemini", BackendOptions(model="gemini-3-flash-preview", base_url=vendor.base_url,
                                                           api_key="test", max_retries=0, record=str(cassette)))
        async with ToolClient.in_process() as tools:
            live = as_lines(await run_samples(probes[:3], recorder, tools, AgentConfig(task=1),
                                     RunOptions(out=tmp_path / "live", concurrency=3, progress=False)))
    replay = create_backend("replay", BackendOptions(model=str(cassette)))  # the vendor is gone now
    async with ToolClient.in_process() as tools:
        again = as_lines(await run_samples(probes[:3], replay, tools, AgentConfig(task=1),
                                  RunOptions(out=tmp_path / "replay", concurrency=1, progress=False)))
    keep = ("answer", "agent", "tool_calls", "rounds", "correct")
    assert {i: {k: r[k] for k in keep} for i, r in again.items()} == \
        {i: {k: r[k] for k in keep} for i, r in live.items()}
