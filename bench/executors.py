"""Batch-run throughput per executor against a fake Gemini API with per-request latency.

Each sample is two model turns (a draw_line tool call, then the answer), so at 200 ms per request the ideal at
concurrency K is K / 0.4 samples/s. Rows at equal concurrency: everything in one process (today's default),
`--workers N` local processes, and Ray actors on a local instance (`ray.init(num_cpus=2)`). "steady" counts
from the moment every lane has finished a sample (so every worker is up: a spawned worker's imports cost
about a second of CPU, which would otherwise fall inside the window) to the last finished sample; "overall"
includes start-up. While steady, the CPU time (user + system, from /proc/<pid>/stat: bench/proctree.py) of
the processes this run started -- the driver, worker processes, Ray's processes and the fake vendor, not the
other jobs on the machine -- gives the CPU time per sample and its inverse, samples per CPU-second, beside
the wall-clock rates. The fake vendor's own CPU is also shown apart: a real vendor's servers are not on this
machine, so "vendor excluded" is the agent side's cost, and the ceiling is the share of the ideal all of this
machine's cores could reach at that cost.

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

from illusion_run import CONFIG, fake_gemini, gemini, serve
from proctree import ProcessTree, process_cpu_seconds

from trompe_agents.backends.base import BackendOptions
from trompe_agents.datasets import load_dataset
from trompe_agents.executors import create_executor
from trompe_agents.illusion.job import WorkerSpec
from trompe_agents.illusion.cli import quiet_http_logs
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.probes import generate
from trompe_agents.toolclient import ToolClient
from trompe_server.app import ServerConfig
from trompe_server.limits import Limits


async def timed(samples, url: str, vendor: int, executor_name: str, workers: int, concurrency: int, work: Path):
    """(overall s, steady samples/s, not answered, CPU ms per sample of this run's processes while steady, and
    of the fake vendor alone) for one fresh run folder."""
    out = Path(tempfile.mkdtemp(dir=work))
    finished: list[float] = []
    tree = ProcessTree()
    cpu: list[tuple[float, float]] = []  # (tree, fake vendor) CPU seconds at the window's start and latest sample

    def finish(_record) -> None:
        finished.append(time.perf_counter())
        if len(finished) < concurrency:  # some lane has not finished a sample yet: its worker may be starting
            return
        if len(finished) == concurrency:
            tree.refresh()  # every worker (process, Ray actor) is up now
        reading = (tree.cpu_seconds(), process_cpu_seconds(vendor))
        cpu[:] = [cpu[0] if cpu else reading, reading]

    spec = WorkerSpec(backend="gemini", config=CONFIG, out=out,
                      options=BackendOptions(model="gemini-3-flash-preview", base_url=url, api_key="bench"))
    executor = create_executor(executor_name, spec, workers=workers, concurrency=concurrency)
    async with ToolClient.in_process(ServerConfig(limits=Limits.from_env())) as tools:
        started = time.perf_counter()
        records = await run_samples(samples, gemini(url), tools, CONFIG,
                                    RunOptions(out=out, concurrency=concurrency, progress=False),
                                    on_result=finish, executor=executor)
        overall = time.perf_counter() - started
    window = len(finished) - concurrency  # samples finished inside the steady window
    steady = window / (finished[-1] - finished[concurrency - 1]) if window > 0 else 0.0
    (tree0, vendor0), (tree1, vendor1) = cpu[0], cpu[-1]
    window = max(1, window)
    return (overall, steady, sum(r["answer"] != "yes" for r in records.values()), 1000 * (tree1 - tree0) / window,
            1000 * (vendor1 - vendor0) / window)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per fake API request (default 0.2)")
    parser.add_argument("--concurrency", type=int, default=64, help="samples in flight (default 64)")
    parser.add_argument("--per-lane", type=int, default=3,
                        help="samples per concurrent lane, at least 2: the first wave is start-up (default 3)")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4], help="worker counts to try")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray rows")
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting; the median is shown")
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        return serve(args.serve)
    if args.per_lane < 2:
        parser.error("--per-lane must be at least 2: the steady window opens once every lane has finished one")
    quiet_http_logs()
    logging.getLogger("google_genai").setLevel(logging.ERROR)
    os.environ["TROMPE_MAX_SESSIONS"] = str(max(64, 2 * args.concurrency))  # one session per lane in flight
    settings = [("local", 1)] + [("local", w) for w in args.workers]
    if not args.no_ray:
        import ray

        settings += [("ray", w) for w in args.workers]
    ideal = args.concurrency / (2 * args.latency)
    cores = len(os.sched_getaffinity(0))
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
                  "| steady vs one process | CPU ms per sample | samples per CPU-second "
                  "| CPU ms per sample, vendor excluded | samples per CPU-second, vendor excluded "
                  f"| {cores}-core ceiling of ideal, vendor excluded | not answered |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            base = None
            with fake_gemini(args.latency) as (url, vendor):
                for name, workers in settings:
                    if name == "ray" and not ray.is_initialized():  # only now: its daemons' CPU is Ray's alone
                        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
                    runs = [asyncio.run(timed(samples, url, vendor, name, workers, args.concurrency, work))
                            for _ in range(args.repeat)]
                    overall = statistics.median(r[0] for r in runs)
                    steady = statistics.median(r[1] for r in runs)
                    base = base or steady
                    cpu_ms = statistics.median(r[3] for r in runs)  # every process of the run, per sample
                    agent_ms = statistics.median(r[3] - r[4] for r in runs)  # without the fake vendor's share
                    print(f"| {name} | {workers} | {overall:.2f} | {n / overall:.1f} | {steady:.1f} | "
                          f"{steady / ideal:.0%} | {steady / base:.2f}x | {cpu_ms:.1f} | {1000 / cpu_ms:.0f} | "
                          f"{agent_ms:.1f} | {1000 / agent_ms:.0f} | {1000 * cores / agent_ms / ideal:.0%} | "
                          f"{sum(r[2] for r in runs)} |", flush=True)
    finally:
        if not args.no_ray:
            ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
