"""Batch-run throughput per executor against a fake Gemini API with per-request latency.

Each sample is two model turns (a draw_line tool call, then the answer), so at 200 ms per request the ideal at
concurrency K is K / 0.4 samples/s. Rows at equal concurrency: everything in one process (today's default),
`--workers N` local processes, and Ray actors on a local instance (`ray.init(num_cpus=2)`). "steady" counts
from the first finished sample to the last (worker start-up excluded); "overall" includes start-up.

    python bench/executors.py [--latency 0.2] [--concurrency 64] [--per-lane 3] [--workers 2 4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from illusion_run import fake_gemini, gemini, serve

from trompe_agents.backends.base import BackendOptions
from trompe_agents.datasets import load_dataset
from trompe_agents.executors import WorkerSpec, create_executor
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.cli import quiet_http_logs
from trompe_agents.illusion.runner import RunOptions, run_samples
from trompe_agents.probes import generate
from trompe_agents.toolclient import ToolClient
from trompe_server.app import ServerConfig
from trompe_server.limits import Limits


async def timed(samples, url: str, executor_name: str, workers: int, concurrency: int, work: Path):
    """(overall s, steady samples/s, not answered) for one fresh run folder."""
    out = Path(tempfile.mkdtemp(dir=work))
    spec = WorkerSpec(backend="gemini", config=AgentConfig(task=1), out=out,
                      options=BackendOptions(model="gemini-3-flash-preview", base_url=url, api_key="bench"))
    executor = create_executor(executor_name, spec, workers=workers, concurrency=concurrency)
    finished: list[float] = []
    async with ToolClient.in_process(ServerConfig(limits=Limits.from_env())) as tools:
        started = time.perf_counter()
        records = await run_samples(samples, gemini(url), tools, AgentConfig(task=1),
                                    RunOptions(out=out, concurrency=concurrency, progress=False),
                                    on_result=lambda r: finished.append(time.perf_counter()), executor=executor)
        overall = time.perf_counter() - started
    steady = (len(finished) - 1) / (finished[-1] - finished[0]) if len(finished) > 1 else 0.0
    return overall, steady, sum(r["answer"] != "yes" for r in records.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per fake API request (default 0.2)")
    parser.add_argument("--concurrency", type=int, default=64, help="samples in flight (default 64)")
    parser.add_argument("--per-lane", type=int, default=3, help="samples per concurrent lane (default 3)")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4], help="worker counts to try")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray rows")
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting; the median is shown")
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        return serve(args.serve)
    quiet_http_logs()
    logging.getLogger("google_genai").setLevel(logging.ERROR)
    os.environ["TROMPE_MAX_SESSIONS"] = str(max(64, 2 * args.concurrency))  # one session per lane in flight
    settings = [("local", 1)] + [("local", w) for w in args.workers]
    if not args.no_ray:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
        settings += [("ray", w) for w in args.workers]
    ideal = args.concurrency / (2 * args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            n = args.concurrency * args.per_lane
            generate("illusions", n=n, seed=0, size=256, out=work / "probes", progress=False)
            samples = list(load_dataset(work / "probes"))
            print(f"fake Gemini API (TCP_NODELAY), {args.latency * 1000:.0f} ms per request, 2 requests per sample, "
                  f"concurrency {args.concurrency}, {n} samples, median of {args.repeat} runs; "
                  f"ideal {ideal:.0f} samples/s\n")
            print("| executor | workers | overall s | overall samples/s | steady samples/s | steady of ideal "
                  "| steady vs one process | not answered |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|")
            base = None
            with fake_gemini(args.latency) as url:
                for name, workers in settings:
                    runs = [asyncio.run(timed(samples, url, name, workers, args.concurrency, work))
                            for _ in range(args.repeat)]
                    overall = statistics.median(r[0] for r in runs)
                    steady = statistics.median(r[1] for r in runs)
                    base = base or steady
                    print(f"| {name} | {workers} | {overall:.2f} | {n / overall:.1f} | {steady:.1f} | "
                          f"{steady / ideal:.0%} | {steady / base:.2f}x | {sum(r[2] for r in runs)} |", flush=True)
    finally:
        if not args.no_ray:
            ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
