"""Faults of a scaled-out deployment, with real processes: a real redis-server, real `trompe-server --http`
replicas behind a round-robin balancer, the agents' tool client and real runs of the illusion agent.

Each fault must end, after at most one --retry-errors, with the results of an uninterrupted run: never an
answer made from an infrastructure error (the scripted model answers 'no' whenever it is shown a tool error).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from faultkit import Balancer
from rediskit import line_samples, start_replicas
from imagekit import data_url, gradient, noise, png_bytes
from serverkit import stop
from runlines import as_lines
from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.probes import generate
from trompe_agents.toolclient import ToolClient, ToolInfrastructureError
from trompe_server.wire import FAILURE_META, REQUEST_META

pytestmark = pytest.mark.slow  # every test starts a Redis and replica processes (some 8 s of imports each)
CONFIG = AgentConfig(task=1, router="regex", tags=["core"], allow=["crop"])
TOKEN = "shared-by-every-agent"


@pytest.fixture
def cluster(own_redis, tmp_path):
    """`cluster(n, *flags)`: n replicas on the Redis behind a balancer (returned); `.procs` are the replicas."""
    procs: list = []
    with Balancer() as balancer:
        def start(n: int, *flags: str, registry: str | None = None) -> Balancer:
            for proc, url in start_replicas(registry or own_redis.url, tmp_path, n, "--allowed-host", balancer.host,
                                            *flags):
                procs.append(proc)
                balancer.add(url)
            return balancer

        start.procs = procs
        yield start
        for proc in procs:
            stop(proc)


class CropTwice:
    """Crops twice, then answers 'yes' when the crops came back as img_001 and img_002 (no lost or duplicated
    version). Shown a tool error it answers 'no': the wrong answer of an agent the infrastructure misled."""

    def __init__(self, delay: float = 0.0):
        self.delay = delay

    async def __call__(self, messages, tools):
        await asyncio.sleep(self.delay)
        results = [m for m in messages if m.role == "tool"]
        if any(m.is_error for m in results):
            return {"reasons": "a tool failed", "answer": "no"}
        if len(results) < 2:
            return tool_call("crop", image="original", box=[0, 0, 8 + len(results), 8])
        made = [p.id for m in results for p in m.images]
        return {"reasons": f"made {made}", "answer": "yes" if made == ["img_001", "img_002"] else "no"}


async def run(samples, tools, out, delay: float = 0.0, on_result=None, **options):
    options = {"concurrency": 1, "progress": False, **options}
    return as_lines(await run_samples(samples, FunctionBackend(CropTwice(delay), "scripted"), tools, CONFIG,
                                      RunOptions(out=out, **options), on_result=on_result))


def outcome(records: dict) -> dict:
    """What must equal an uninterrupted run's: answer, score, the calls made, the failure if any."""
    return {i: (r["answer"], r["correct"], r["tool_calls"], r["refused_calls"], r["error_kind"])
            for i, r in sorted(records.items())}


UNINTERRUPTED = {f"s{i}": ("yes", True, ["crop", "crop"], [], None) for i in range(12)}


async def test_sessions_evicted_under_load_fail_their_samples_and_a_retry_answers_them(cluster, tmp_path):
    """The docs' shared token with a quota below --concurrency: opens evict other samples' sessions."""
    balancer = cluster(1, "--token", TOKEN, "--max-sessions-per-client", "2")
    samples, out = line_samples(tmp_path, 8), tmp_path / "run"
    async with ToolClient.http(balancer.url, TOKEN) as tools:
        first = await run(samples, tools, out, delay=0.05, concurrency=6)
        failed = [r for r in first.values() if r["answer"] is None]
        assert failed, "with 6 samples at once on a quota of 2, some sessions must have been evicted"
        assert {r["error_kind"] for r in failed} == {"tool_infrastructure"}
        assert all("lost this sample's session" in r["error"] for r in failed)
        assert all("max_sessions_per_client" in r["error"] and "--max-sessions-per-client" in r["error"]
                   for r in failed), [r["error"] for r in failed]  # the quota and the setting that raises it
        assert all(r["answer"] == "yes" for r in first.values() if r["answer"] is not None)  # never 'no'
        retried = await run(samples, tools, out, retry_errors=True, concurrency=2)
    assert outcome(retried) == {i: v for i, v in UNINTERRUPTED.items() if i in retried}


async def test_a_replica_killed_mid_run_costs_nothing(cluster, tmp_path):
    """The client reconnects through the balancer to the other replica and resends; nothing is duplicated."""
    balancer = cluster(2)
    samples, out = line_samples(tmp_path, 12), tmp_path / "run"

    def kill_first_replica(record: dict) -> None:
        if cluster.procs[0].poll() is None:
            cluster.procs[0].kill()  # SIGKILL, with the other samples' calls in flight

    async with ToolClient.http(balancer.url) as tools:
        records = await run(samples, tools, out, delay=0.02, on_result=kill_first_replica, concurrency=4)
    assert cluster.procs[0].returncode == -signal.SIGKILL
    assert outcome(records) == UNINTERRUPTED


@pytest.mark.parametrize("how", ["restart", "kill -9"])
async def test_a_redis_restart_mid_run_ends_as_an_uninterrupted_run(cluster, own_redis, tmp_path, how):
    balancer = cluster(2)
    samples, out = line_samples(tmp_path, 12), tmp_path / "run"
    restarted = threading.Event()

    def restart() -> None:
        if how == "restart":
            own_redis.stop()
        else:
            own_redis.proc.kill()
            own_redis.proc.wait()
        time.sleep(0.5)
        own_redis.start()  # same port, same append-only file
        restarted.set()

    def on_result(record: dict) -> None:
        if not hasattr(on_result, "thread"):
            on_result.thread = threading.Thread(target=restart)
            on_result.thread.start()

    async with ToolClient.http(balancer.url) as tools:
        first = await run(samples, tools, out, delay=0.05, on_result=on_result, concurrency=4)
        assert restarted.wait(30)
        assert all(r["answer"] == "yes" or r["error_kind"] == "tool_infrastructure" for r in first.values())
        retried = await run(samples, tools, out, retry_errors=True, concurrency=4)
    assert outcome(retried) == UNINTERRUPTED


async def test_a_request_sent_twice_is_stored_once_whichever_replica_gets_it(cluster):
    """What a resend after a lost reply does: the same request id returns the stored session and image."""
    balancer = cluster(2)
    a_url, b_url = balancer.urls
    opening = {REQUEST_META: "open-0000000001"}
    cropping = {REQUEST_META: "crop-0000000001"}
    async with Client(streamable_http_client(a_url)) as a, Client(streamable_http_client(b_url)) as b:
        opened = [await c.call_tool("open_session", {"source": data_url(gradient())}, meta=opening) for c in (a, b)]
        session = opened[0].structured_content["session"]
        assert opened[1].structured_content["session"] == session
        crop = {"session": session, "image": "original", "box": [0, 0, 8, 8]}
        made = [await c.call_tool("crop", crop, meta=cropping) for c in (b, a)]
        assert [m.structured_content["image"] for m in made] == ["img_001", "img_001"]
        other = await a.call_tool("crop", crop, meta={REQUEST_META: "crop-0000000002"})
        assert other.structured_content["image"] == "img_002"
        listing = await a.call_tool("list_images", {"session": session})
        assert [i["id"] for i in listing.structured_content["images"]] == ["original", "img_001", "img_002"]
        bad = await a.call_tool("crop", crop, meta={REQUEST_META: "no spaces!"})
        assert bad.is_error and "_meta.trompe/request: 'no spaces!' is not a request id" in bad.content[0].text


async def test_redis_over_maxmemory_refuses_stores_but_reads_and_closes_work(cluster, own_redis):
    balancer = cluster(1)
    async with Client(streamable_http_client(balancer.url)) as client:
        first = await client.call_tool("open_session", {"source": data_url(noise((256, 256)))})
        session = first.structured_content["session"]
        with own_redis.client() as r:
            r.config_set("maxmemory", r.info("memory")["used_memory"] + 64 * 1024)
        sessions, refused = [session], None
        for seed in range(20):  # pixels that neither compress nor repeat: each takes its full size in Redis
            result = await client.call_tool("open_session", {"source": data_url(noise((128, 128), seed=seed))})
            if result.is_error:
                refused = result
                break
            sessions.append(result.structured_content["session"])
        assert refused is not None, "Redis never reached its maxmemory"
        text = refused.content[0].text
        assert "is full (over its maxmemory): new sessions and images are refused" in text
        assert refused.meta[FAILURE_META] == "registry"
        with own_redis.client() as r:
            r.config_set("maxmemory", 1)  # well over it now, whatever a refused write left
            held = r.info("memory")["used_memory"]
        crop = await client.call_tool("crop", {"session": session, "image": "original", "box": [0, 0, 128, 128]})
        assert crop.is_error and "is full" in crop.content[0].text
        listing = await client.call_tool("list_images", {"session": session})
        assert not listing.is_error, listing.content[0].text
        assert len(listing.structured_content["images"]) == 1
        view = await client.call_tool("view_image", {"session": session, "image": "original"})
        assert not view.is_error
        assert (await client.read_resource(f"image://{session}/original")).contents[0].blob
        for opened in sessions:  # closing is how an operator frees memory: it must work now
            closed = await client.call_tool("close_session", {"session": opened})
            assert not closed.is_error, closed.content[0].text
        with own_redis.client() as r:
            assert r.info("memory")["used_memory"] < held - 100_000  # their pixels are gone
            r.config_set("maxmemory", 0)
        again = await client.call_tool("open_session", {"source": data_url(gradient())})
        assert not again.is_error, again.content[0].text


async def test_a_hung_redis_fails_a_call_within_the_urls_socket_timeout(cluster, own_redis):
    balancer = cluster(1, registry=own_redis.url + "?socket_timeout=1")
    async with Client(streamable_http_client(balancer.url)) as client:
        opened = await client.call_tool("open_session", {"source": data_url(gradient())})
        session = opened.structured_content["session"]
        os.kill(own_redis.proc.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            hung = await client.call_tool("list_images", {"session": session})
            waited = time.monotonic() - started
        finally:
            os.kill(own_redis.proc.pid, signal.SIGCONT)
        assert hung.is_error and "is unreachable" in hung.content[0].text and "Timeout" in hung.content[0].text
        assert hung.meta[FAILURE_META] == "registry"
        assert waited < 5, f"a hung Redis held the call {waited:.1f} s with socket_timeout=1"
        assert not (await client.call_tool("list_images", {"session": session})).is_error


async def test_a_registry_that_stays_down_fails_the_call_as_infrastructure_after_the_retries(cluster, own_redis):
    balancer = cluster(1)
    tools = ToolClient.http(balancer.url)
    tools.retry_delay = 0.05
    async with tools:
        info = await tools.open_session({"original": png_bytes(gradient())})
        own_redis.stop()
        with pytest.raises(ToolInfrastructureError, match=r"crop: the tool server .* failed 5 times; last: .*"
                           r"the shared registry \(Redis at redis://127.0.0.1:\d+/0\) is unreachable") as error:
            await tools.call(info.id, "crop", {"image": "original", "box": [0, 0, 8, 8]})
        assert error.value.kind == "tool_infrastructure"


def test_a_replica_killed_under_a_worker_process_run_leaves_every_sample_answered(cluster, tmp_path):
    """The CLI with --workers (each worker process has its own tool client): a replica's death costs nothing."""
    balancer = cluster(2)
    probes = tmp_path / "probes"
    generate("illusions", families=["hering", "ebbinghaus"], n=8, seed=3, size=96, out=probes, progress=False)
    out, gate = tmp_path / "run", tmp_path / "gate"
    models = [Path(__file__).parent, Path(__file__).parents[1] / "illusion"]  # heldmodels, and scripted it uses
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, models), os.environ.get("PYTHONPATH", "")]),
           "TROMPE_TEST_GATE": str(gate)}
    cmd = [sys.executable, "-m", "trompe_agents.illusion.cli", "--backend", "function", "--model",
           "heldmodels:two_answers_then_the_gate", "run", "--dataset", str(probes), "--task", "1", "--out", str(out),
           "--concurrency", "4", "--workers", "2", "--server-url", balancer.url, "--no-progress"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 240  # a bound for a stuck run, not a timing check
    while not (results.exists() and results.read_text().count("\n") >= 2):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run ended or stalled before two answers: {proc.communicate()[1][-3000:]}")
        time.sleep(0.05)  # polling a condition: two answers are in, the others wait on the gate
    cluster.procs[0].kill()
    assert results.read_text().count("\n") < 8, "the kill should land mid-run"
    gate.touch()
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 0, stderr[-3000:]
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r["id"] for r in records) == sorted({r["id"] for r in records}) and len(records) == 8
    assert all(r["answer"] == "yes" and r["error"] is None for r in records), [r["error"] for r in records]


async def test_a_hung_replica_costs_a_sample_at_most_one_deadline_and_the_resend_goes_to_the_other(cluster, tmp_path):
    """A replica stopped with SIGSTOP (alive, its port open, answering nothing): calls on it pass the per-call
    deadline and are sent again, with their request ids, to the other replica the client was given; every sample
    is answered as in an uninterrupted run, none waits a deadline per retry."""
    deadline = 4.0
    balancer = cluster(2)
    hung = cluster.procs[0]
    samples, out = line_samples(tmp_path, 12), tmp_path / "run"

    def stop_first_replica(record: dict) -> None:
        if hung.poll() is None and not getattr(hung, "stopped", False):
            hung.stopped = True
            os.kill(hung.pid, signal.SIGSTOP)  # with the other samples' calls in flight

    try:
        async with ToolClient.http(balancer.urls, timeout=deadline) as tools:
            records = await run(samples, tools, out, delay=0.02, on_result=stop_first_replica, concurrency=4)
    finally:
        os.kill(hung.pid, signal.SIGCONT)
    assert hung.stopped
    assert outcome(records) == UNINTERRUPTED
    slowest = max(r["seconds"] for r in records.values())
    assert slowest < deadline * 3, f"a sample waited {slowest:.1f} s on a hung replica with a {deadline} s deadline"


async def test_a_hung_replica_behind_one_url_costs_a_call_one_deadline_and_a_retry_answers_it(cluster, tmp_path):
    """The only replica behind the balancer's one URL stopped with SIGSTOP (the balancer still connects to it, as
    to any replica it believes healthy): each resend would land on it again, so a call's resends share one
    deadline; the samples fail as tool infrastructure naming --tool-timeout, and once the replica runs again one
    --retry-errors answers them as an uninterrupted run would."""
    deadline = 5.0
    balancer = cluster(1)
    hung = cluster.procs[0]
    samples, out = line_samples(tmp_path, 6), tmp_path / "run"

    def stop_the_replica(record: dict) -> None:
        if not getattr(hung, "stopped", False):
            hung.stopped = True
            os.kill(hung.pid, signal.SIGSTOP)  # with the other samples' calls in flight

    try:
        async with ToolClient.http(balancer.url, timeout=deadline) as tools:
            first = await run(samples, tools, out, on_result=stop_the_replica, concurrency=3)
    finally:
        os.kill(hung.pid, signal.SIGCONT)
    failed = {i: r for i, r in first.items() if r["answer"] is None}
    assert failed, "the replica should stop mid-run"
    assert {r["error_kind"] for r in failed.values()} == {"tool_infrastructure"}
    assert all("did not answer within 5 s" in r["error"] and "--tool-timeout 5 s" in r["error"]
               for r in failed.values()), [r["error"] for r in failed.values()]
    # one deadline for the failed call and one for closing its session; resending to the same hung replica would
    # cost each call five, and 7.5 s of pauses
    slowest = max(r["seconds"] for r in failed.values())
    assert slowest < deadline * 4, f"a sample waited {slowest:.1f} s on a hung replica with a {deadline} s deadline"
    async with ToolClient.http(balancer.url, timeout=deadline) as tools:
        retried = await run(samples, tools, out, retry_errors=True, concurrency=3)
    assert outcome(retried) == {i: v for i, v in UNINTERRUPTED.items() if i in retried}
