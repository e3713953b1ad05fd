"""Peak memory of the Ray executor's driver against the batch size: submitted in a window, or all up front.

Each run is a fresh process that starts a local Ray instance (2 CPUs) and runs RayExecutor on N items with a
job whose workers answer at once (an echo of a ~1 KB record), so what grows is only what the driver keeps per
task: Ray's task specs, object references and results. `--up-front` sets the window past the batch, which is
how every task was submitted before (the baseline). The driver's peak RSS (ru_maxrss) is printed.

    python bench/ray_driver_memory.py [--sizes 2000 20000] [--workers 2] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile


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


def one_run(n: int, workers: int, concurrency: int, up_front: bool) -> dict:
    import ray

    from trompe_agents.executors import ray_executor

    if up_front:
        ray_executor.WINDOW = n  # every task submitted at once, as before the window
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR",
             _temp_dir=tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    got = []
    executor = ray_executor.RayExecutor(EchoJob(), workers=workers, concurrency=concurrency)
    asyncio.run(executor.run([(i, f"sample {i}") for i in range(n)], lambda record: got.append(record["index"])))
    ray.shutdown()
    assert sorted(got) == list(range(n))
    return {"after_start_mb": before, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--one", nargs=2, metavar=("N", "MODE"), help=argparse.SUPPRESS)  # a child run
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one_run(int(args.one[0]), args.workers, args.concurrency, args.one[1] == "up-front")))
        return 0
    print(f"{args.workers} workers, concurrency {args.concurrency}, echo job; driver peak RSS in MB\n")
    print("| samples | submitted | driver RSS after ray.init | driver peak RSS |")
    print("|---:|---|---:|---:|")
    for n in args.sizes:
        for mode in ("window", "up-front"):
            out = subprocess.run([sys.executable, __file__, "--workers", str(args.workers), "--concurrency",
                                  str(args.concurrency), "--one", str(n), mode],
                                 capture_output=True, text=True, check=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            print(f"| {n:,} | {mode} | {row['after_start_mb']:.0f} | {row['peak_mb']:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
