"""Peak memory of the Ray executor's driver against the batch size: the executor alone, or the real agent.

The executor alone (default): each run is a fresh process that starts a local Ray instance (2 CPUs) and runs
RayExecutor on N items with a job whose workers answer at once (an echo of a ~1 KB record), so what grows is
only what the driver keeps per task: Ray's task specs, object references and results. `--up-front` sets the
window past the batch, which is how every task was submitted before (the baseline).

The real agent (`--agent`): each run is `illusion-agent run --executor ray` (its `main`, in a fresh process
that measures itself) with the claude backend against the fake Anthropic API (agents/trompe_agents/testing,
in a child process of its own), on a synthetic dataset of N rows over 64 generated probes (each row its own id,
the images shared), so the driver does everything it does in a real run: the dataset, resume checks, the
results writer, the tally and the summary. Each sample is one model request, answered at once. The driver's
peak RSS (ru_maxrss) is printed, and its RSS when 10%, 50% and all of the samples were written.

    python bench/ray_driver_memory.py [--sizes 2000 20000] [--workers 2] [--concurrency 64]
    python bench/ray_driver_memory.py --agent --sizes 5000 10000 20000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROBES = 64  # distinct generated probes the synthetic dataset's rows cycle through
ANSWER = '{"reasons": "bench", "answer": "yes"}'


class Echo:
    """A worker that answers every item at once with a record of about the size of a real one."""

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        return None

    async def answer(self, item):
        index, text = item
        return {"index": index, "answer": text, "trace": "x" * 1000}


class EchoJob:
    """Plain data shipped to Ray's workers: each builds an Echo."""

    def worker(self, share: int) -> Echo:
        return Echo()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one_run(n: int, workers: int, concurrency: int, up_front: bool) -> dict:
    import ray

    from trompe_agents.executors import ray_executor

    if up_front:
        ray_executor.WINDOW = n  # every task submitted at once, as before the window
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR",
             _temp_dir=tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    before = peak_mb()
    got = []
    executor = ray_executor.RayExecutor(EchoJob(), workers=workers, concurrency=concurrency)
    asyncio.run(executor.run([(i, f"sample {i}") for i in range(n)], lambda record: got.append(record["index"])))
    ray.shutdown()
    assert sorted(got) == list(range(n))
    return {"after_start_mb": before, "peak_mb": peak_mb()}


def synthetic_dataset(n: int, folder: Path) -> Path:
    """probes.jsonl with n rows over PROBES generated probes: ids made unique, images shared."""
    from trompe_agents.probes import generate

    generate("illusions", families=["ebbinghaus", "hering", "poggendorff"], n=PROBES, seed=3, size=96,
             out=folder, progress=False)
    rows = (folder / "probes.jsonl").read_text().splitlines()
    with (folder / "probes.jsonl").open("w") as f:
        for i in range(n):
            row = json.loads(rows[i % len(rows)])
            row["id"] = f"{row['id']}-r{i}"
            f.write(json.dumps(row) + "\n")
    return folder


def serve() -> int:
    """Child mode: the fake Anthropic API, answering every request at once, until stdin closes."""
    from trompe_agents.testing import FakeVendor, final

    with FakeVendor("anthropic", [final(ANSWER)]) as vendor:
        def forget() -> None:  # its request log would otherwise hold every request of the batch
            while True:
                time.sleep(1)
                with vendor._lock:
                    vendor.requests.clear()
                    vendor.responses.clear()

        threading.Thread(target=forget, daemon=True).start()
        print(vendor.base_url, flush=True)
        sys.stdin.read()
    return 0


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def one_agent_run(n: int, work: Path, url: str, workers: int, concurrency: int) -> dict:
    """Child mode: `illusion-agent run` in this process, its RSS read as results.jsonl fills."""
    from trompe_agents.illusion.cli import main as illusion_agent

    out = work / "run"
    results = out / "results.jsonl"
    marks = {0.1: None, 0.5: None, 1.0: None}
    stop = threading.Event()

    def watch() -> None:  # reads only what was appended since, so the watching itself holds no batch
        done, offset = 0, 0
        while not stop.wait(0.5):
            if results.exists():
                with results.open("rb") as f:
                    f.seek(offset)
                    chunk = f.read()
                done, offset = done + chunk.count(b"\n"), offset + len(chunk)
            for share in marks:
                if marks[share] is None and done >= share * n:
                    marks[share] = rss_mb()

    threading.Thread(target=watch, daemon=True).start()
    os.environ["BENCH_KEY"] = "bench"
    started = time.monotonic()
    code = illusion_agent(["--backend", "claude", "--base-url", url,
                           "--api-key-env", "BENCH_KEY", "run", "--dataset", str(work / "probes"), "--task", "1",
                           "--router", "regex", "--out", str(out), "--executor", "ray", "--workers", str(workers),
                           "--concurrency", str(concurrency), "--no-progress"])
    seconds, peak = time.monotonic() - started, peak_mb()  # before this check reads anything
    stop.set()
    with results.open("rb") as f:  # line by line: reading the file whole would be the peak at 100k samples
        written = sum(1 for _ in f)
    assert code == 0 and written == n, (code, written)
    return {"peak_mb": peak, "seconds": seconds, **{f"rss_{int(k * 100)}_mb": v for k, v in marks.items()}}


def agent_table(sizes: list[int], workers: int, concurrency: int) -> None:
    print(f"illusion-agent run --executor ray, {workers} workers, concurrency {concurrency}, fake Anthropic API "
          "(one request per sample); driver RSS in MB\n")
    print("| samples | seconds | samples/s | RSS at 10% | RSS at 50% | RSS at 100% | driver peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    vendor = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        url = vendor.stdout.readline().strip()
        for n in sizes:
            with tempfile.TemporaryDirectory(prefix="ray-agent-") as tmp:
                synthetic_dataset(n, Path(tmp) / "probes")
                sessions = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's socket paths: under 108 bytes
                out = subprocess.run([sys.executable, __file__, "--workers", str(workers), "--concurrency",
                                      str(concurrency), "--one-agent", str(n), tmp, url],
                                     capture_output=True, text=True, env={**os.environ, "RAY_TMPDIR": sessions})
                shutil.rmtree(sessions, ignore_errors=True)
                if out.returncode:
                    raise SystemExit(f"{n} samples: the run failed\n{out.stderr[-3000:]}")
                row = json.loads(out.stdout.strip().splitlines()[-1])
                cells = " | ".join(f"{row[k]:.0f}" if row[k] is not None else "–"
                                   for k in ("rss_10_mb", "rss_50_mb", "rss_100_mb", "peak_mb"))
                print(f"| {n:,} | {row['seconds']:.0f} | {n / row['seconds']:.1f} | {cells} |", flush=True)
    finally:
        vendor.stdin.close()
        vendor.wait(timeout=30)


def executor_table(sizes: list[int], workers: int, concurrency: int) -> None:
    print(f"{workers} workers, concurrency {concurrency}, echo job; driver peak RSS in MB\n")
    print("| samples | submitted | driver RSS after ray.init | driver peak RSS |")
    print("|---:|---|---:|---:|")
    for n in sizes:
        for mode in ("window", "up-front"):
            out = subprocess.run([sys.executable, __file__, "--workers", str(workers), "--concurrency",
                                  str(concurrency), "--one", str(n), mode],
                                 capture_output=True, text=True, check=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            print(f"| {n:,} | {mode} | {row['after_start_mb']:.0f} | {row['peak_mb']:.0f} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--agent", action="store_true", help="the real agent: illusion-agent run, fake vendor")
    parser.add_argument("--one", nargs=2, metavar=("N", "MODE"), help=argparse.SUPPRESS)  # a child run
    parser.add_argument("--one-agent", nargs=3, metavar=("N", "DIR", "URL"), help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve()
    if args.one:
        print(json.dumps(one_run(int(args.one[0]), args.workers, args.concurrency, args.one[1] == "up-front")))
        return 0
    if args.one_agent:
        n, work, url = args.one_agent
        print(json.dumps(one_agent_run(int(n), Path(work), url, args.workers, args.concurrency)))
        return 0
    (agent_table if args.agent else executor_table)(args.sizes, args.workers, args.concurrency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
