"""Throughput of `illusion-agent run` against a fake Gemini API with per-request latency.

Each sample is two model turns (a draw_line tool call, then the answer), so at 200 ms per request one
worker finishes at most 2.5 samples/s; K workers at most 2.5*K. The table shows how close each concurrency
gets to that linear ideal. The agent's own overhead per sample is measured with a zero-latency fake vendor
(SDK + HTTP + MCP tool + trace) and with the in-process `function` backend (MCP tool + trace only).
The fake API runs in a subprocess, so its JSON work does not compete with the agent for this process's GIL.
Beside the wall-clock rates, the agent's CPU time (this process: SDK, HTTP client, in-process tool server,
trace; not the fake vendor, nor other jobs on the machine) gives samples per CPU-second.

    python bench/illusion_run.py [--latency 0.2] [--concurrency 1 4 16 64] [--per-worker 4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from trompe_agents.backends.base import BackendOptions
from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.datasets import load_dataset
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.cli import quiet_http_logs
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.plugins import create_backend
from trompe_agents.probes import generate
from trompe_agents.testing import FakeVendor, call, final, tool_results

LINE = {"image": "original", "start": [0, 5], "end": [60, 5]}
ANSWER = '{"reasons": "bench", "answer": "yes"}'
# The regex router decides the category without a model request, so each sample is exactly the two turns the
# ideal assumes (the default model router adds a third request; see bench/README.md).
CONFIG = AgentConfig(task=1, router="regex")


def script(body, n):
    return final(ANSWER) if tool_results("gemini", body) else call("draw_line", **LINE)


def decide(messages, tools):
    return ANSWER if messages[-1].role == "tool" else tool_call("draw_line", **LINE)


async def timed_run(samples, backend, concurrency: int, work: Path) -> tuple[float, float, int]:
    """Seconds and agent CPU seconds for one fresh run of `samples` (a new run folder: nothing skipped), and
    samples not answered."""
    from trompe_agents.toolclient import ToolClient

    out = Path(tempfile.mkdtemp(dir=work))
    async with ToolClient.in_process() as tools:
        started, cpu = time.perf_counter(), time.process_time()
        records = await run_samples(samples, backend, tools, CONFIG,
                                    RunOptions(out=out, concurrency=concurrency, progress=False))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return seconds, cpu, sum(r["answer"] != "yes" or r["agent"] != "main" for r in records.values())


def median_run(samples, backend, concurrency: int, work: Path, repeat: int) -> tuple[float, float, int]:
    """Median seconds, median agent CPU seconds, and samples not answered over all runs."""
    runs = [asyncio.run(timed_run(samples, backend, concurrency, work)) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), sum(r[2] for r in runs)


@contextmanager
def fake_gemini(latency: float):
    """A FakeVendor in a child process; yields its base URL and process id."""
    child = subprocess.Popen([sys.executable, __file__, "--serve", str(latency)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        yield child.stdout.readline().strip(), child.pid
    finally:
        child.stdin.close()
        child.wait(timeout=30)


def serve(latency: float) -> int:
    """Child mode: serve the scripted fake Gemini API until stdin closes."""
    with FakeVendor("gemini", script, latency=latency) as vendor:
        print(vendor.base_url, flush=True)
        sys.stdin.read()
    return 0


def gemini(base_url: str):
    return create_backend("gemini", BackendOptions(model="gemini-3-flash-preview", base_url=base_url,
                                                   api_key="bench"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per fake API request (default 0.2)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--per-worker", type=int, default=4, help="samples per worker in each run (default 4)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting; the median is shown")
    parser.add_argument("--size", type=int, default=256, help="probe image side in pixels (default 256)")
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        return serve(args.serve)
    quiet_http_logs()
    logging.getLogger("google_genai").setLevel(logging.ERROR)  # "non-text parts in the response" per tool call

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        most = max(args.concurrency) * args.per_worker
        generate("illusions", n=most, seed=0, size=args.size, out=work / "probes", progress=False)
        probes = list(load_dataset(work / "probes"))

        print(f"fake Gemini API, {args.latency * 1000:.0f} ms per request, 2 requests per sample, "
              f"median of {args.repeat} runs, {args.size}px probes\n")
        print("| concurrency | samples | median s | samples/s | ideal samples/s | of ideal | speed-up vs K=1 "
              "| agent CPU ms per sample | samples per agent CPU-second | not answered |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        base = None
        with fake_gemini(args.latency) as (url, _):
            backend = gemini(url)
            for k in args.concurrency:
                samples = probes[: k * args.per_worker]
                seconds, cpu, failed = median_run(samples, backend, k, work, args.repeat)
                rate = len(samples) / seconds
                ideal = k / (2 * args.latency)
                base = base or rate
                print(f"| {k} | {len(samples)} | {seconds:.2f} | {rate:.2f} | {ideal:.1f} | {rate / ideal:.0%} | "
                      f"{rate / base:.1f}x | {1000 * cpu / len(samples):.1f} | {len(samples) / cpu:.0f} | {failed} |",
                      flush=True)

        samples = probes[:16]
        print("\nagent overhead per sample (concurrency 1, zero latency, 16 samples, median of runs)\n")
        print("| backend | ms per sample | ratio vs function | agent CPU ms per sample | ratio vs function |")
        print("|---|---:|---:|---:|---:|")
        rows = []
        with fake_gemini(0.0) as (url, _):
            for name, backend in (("function (in-process)", FunctionBackend(decide)),
                                  ("gemini SDK -> loopback HTTP", gemini(url))):
                seconds, cpu, _ = median_run(samples, backend, 1, work, args.repeat)
                rows.append((name, 1000 * seconds / len(samples), 1000 * cpu / len(samples)))
        for name, ms, cpu_ms in rows:
            print(f"| {name} | {ms:.1f} | {ms / rows[0][1]:.2f}x | {cpu_ms:.1f} | {cpu_ms / rows[0][2]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
