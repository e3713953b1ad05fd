"""Batch-run throughput per executor against a fake Gemini API with per-request latency.

Each sample is two model turns (a draw_line tool call, then the answer), so at 200 ms per request the ideal at
concurrency K is K / 0.4 samples/s. Rows at equal concurrency: everything in one process (today's default),
`--workers N` local processes, and Ray actors on a local instance (`ray.init(num_cpus=2)`). "steady" counts
from the first finished sample to the last (worker start-up excluded); "overall" includes start-up. While
steady, the machine's CPU counters (/proc/stat) give how busy its cores were and so the CPU time per sample
(every process: driver, workers, Ray, the fake vendor, and anything else running, so measure on a quiet
machine); the CPU ceiling is what all cores could finish at that cost. An executor near 100% busy is bound
by the cores, not by its design. The fake vendor's own CPU is also shown apart: a real vendor's servers are
not on this machine, so "vendor excluded" is the agent side's cost and the share of the ideal the cores could
reach at that cost.

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

from trompe_agents.backends.base import BackendOptions
from trompe_agents.datasets import load_dataset
from trompe_agents.executors import WorkerSpec, create_executor
from trompe_agents.illusion.cli import quiet_http_logs
from trompe_agents.illusion.runner import RunOptions, run_samples
from trompe_agents.probes import generate
from trompe_agents.toolclient import ToolClient
from trompe_server.app import ServerConfig
from trompe_server.limits import Limits


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one live process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far, summed over its CPUs (Linux /proc/stat)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


async def timed(samples, url: str, vendor: int, executor_name: str, workers: int, concurrency: int, work: Path):
    """(overall s, steady samples/s, not answered, machine CPU busy while steady, fake vendor CPU ms per
    sample) for one fresh run folder."""
    out = Path(tempfile.mkdtemp(dir=work))
    finished: list[float] = []
    cpu: list[tuple[int, int, float]] = []  # machine and fake-vendor CPU at the first and latest finished sample

    def finish(_record) -> None:
        finished.append(time.perf_counter())
        reading = (*cpu_times(), process_cpu_seconds(vendor))
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
    steady = (len(finished) - 1) / (finished[-1] - finished[0]) if len(finished) > 1 else 0.0
    (busy0, total0, vendor0), (busy1, total1, vendor1) = cpu[0], cpu[-1]
    busy = (busy1 - busy0) / max(1, total1 - total0)  # share of the machine's CPU time that was busy
    vendor_ms = 1000 * (vendor1 - vendor0) / max(1, len(finished) - 1)
    return overall, steady, sum(r["answer"] != "yes" for r in records.values()), busy, vendor_ms


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
                  "| steady vs one process | machine CPU busy | CPU ms per sample | CPU ceiling samples/s "
                  "| CPU ms per sample, vendor excluded | its ceiling of ideal | not answered |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            base = None
            with fake_gemini(args.latency) as (url, vendor):
                for name, workers in settings:
                    runs = [asyncio.run(timed(samples, url, vendor, name, workers, args.concurrency, work))
                            for _ in range(args.repeat)]
                    overall = statistics.median(r[0] for r in runs)
                    steady = statistics.median(r[1] for r in runs)
                    base = base or steady
                    busy = statistics.median(r[3] for r in runs)
                    cpu_ms = 1000 * cores * busy / steady  # the machine's CPU time per finished sample
                    agent_ms = cpu_ms - statistics.median(r[4] for r in runs)  # without the fake vendor's share
                    print(f"| {name} | {workers} | {overall:.2f} | {n / overall:.1f} | {steady:.1f} | "
                          f"{steady / ideal:.0%} | {steady / base:.2f}x | {busy:.0%} | {cpu_ms:.1f} | "
                          f"{1000 * cores / cpu_ms:.0f} | {agent_ms:.1f} | {1000 * cores / agent_ms / ideal:.0%} | "
                          f"{sum(r[2] for r in runs)} |", flush=True)
    finally:
        if not args.no_ray:
            ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
