"""CPU of `--executor ray` against `--workers` (local processes) for the same batch, and where Ray's extra goes.

Each run is `illusion-agent run --backend function` (its `main`, in a fresh child process) on N generated
probes: the function model makes one `convert_grayscale` call, then answers, so each sample is two model turns,
one real tool call, a trace and a record, and no network. This bench is a child subreaper
(PR_SET_CHILD_SUBREAPER): every process the run starts, Ray's daemons and actors included, is reaped by its
parent or by this bench, so RUSAGE_CHILDREN after the run is the **CPU of all of the run's processes**, start-up
and shut-down included. While the run goes, /proc is read every 0.2 s for each descendant's CPU and name, which
splits the total by process kind (driver, workers or actors, Ray's daemons) to say where the difference goes.
Two sizes give the fixed cost (start-up, shut-down, idle polling) and the cost per sample apart.

    python bench/ray_overhead.py [--samples 2000] [--small 100] [--workers 2] [--concurrency 16]

It prints the ratio ray / local of the total CPU at --samples, of the CPU per sample, and the split.
`--idle SECONDS` instead prices what Ray's processes cost per second while --workers actors sit idle (polling).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
PR_SET_CHILD_SUBREAPER = 36
TICKS = os.sysconf("SC_CLK_TCK")


def decide(messages, tools):
    """The model: one tool call on the question's image, then the answer."""
    from trompe_agents.backends.function import tool_call

    if messages[-1].role == "tool":
        return {"reasons": "bench", "answer": "yes"}
    return tool_call("convert_grayscale", image="original")


def kind_of(pid: int) -> str:
    """What a process is now, by its executable or the title Ray or multiprocessing gives it (a Ray worker starts
    as setup_worker.py, whose command line names the raylet, and retitles itself ray::Answerer)."""
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
    if comm in ("raylet", "gcs_server"):
        return f"Ray {comm}"
    if not cmd:
        return "other: "
    for needle, kind in (("ray::Answerer", "Ray actors (the workers)"), ("ray::IDLE", "Ray idle workers"),
                         ("worker.py", "Ray workers starting"), ("ray::DashboardAgent", "Ray dashboard agents"),
                         ("dashboard", "Ray dashboard agents"), ("ray::RuntimeEnvAgent", "Ray runtime_env agent"),
                         ("runtime_env", "Ray runtime_env agent"), ("log_monitor", "Ray log_monitor"),
                         ("monitor.py", "Ray monitor"), ("ray::", "Ray actors (the workers)"),
                         ("multiprocessing", "worker processes")):
        if needle in cmd:
            return kind
    return "other: " + cmd[:60]


def watch(root: int, seen: dict[int, tuple[str, float]], stop: threading.Event) -> None:
    """Each descendant's latest CPU seconds and kind, read from /proc until `stop`."""
    from proctree import _stat, descendants

    while not stop.wait(0.2):
        for pid in descendants(root) - {root}:
            fields = _stat(pid)
            if fields is not None:
                kind = kind_of(pid)
                if kind in ("?", "other: ") and pid in seen:  # exiting: its command line is gone already
                    kind = seen[pid][0]
                seen[pid] = (kind, (int(fields[11]) + int(fields[12])) / TICKS)


def reap_all(seconds: float) -> None:
    """Wait for every adopted orphan (Ray's processes outlive the driver briefly) so its CPU is counted."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.1)


class CpuGroup:
    """A cgroup v1 cpuacct group for one run, where it can be made (root): every process started in it stays in it
    whoever reaps it, so its usage is the run's CPU exactly. None where it cannot (then RUSAGE_CHILDREN)."""

    ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __init__(self) -> None:
        self.path: Path | None = self.ROOT / f"trompe-bench-{os.getpid()}-{time.monotonic_ns()}"
        try:
            self.path.mkdir()
        except OSError:
            self.path = None

    def join(self) -> None:
        """In the child, before it runs the command (preexec_fn)."""
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float | None:
        return None if self.path is None else int((self.path / "cpuacct.usage").read_text()) / 1e9

    def remove(self) -> None:
        if self.path is not None:
            self.path.rmdir()


def one_run(executor: str, workers: int, samples: int, concurrency: int, probes: Path, work: Path) -> dict:
    """CPU seconds of every process of one run, and its split by kind."""
    out = Path(tempfile.mkdtemp(dir=work))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
           "RAY_USAGE_STATS_ENABLED": "0"}
    group = CpuGroup()
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", "import sys; from trompe_agents.illusion.cli import main; "
                              "sys.exit(main(sys.argv[1:]))",
                              "--backend", "function", "--model", "ray_overhead:decide", "run",
                              "--dataset", str(probes), "--out", str(out), "--limit", str(samples),
                              "--concurrency", str(concurrency), "--workers", str(workers), "--executor", executor,
                              "--no-progress"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=group.join)
    seen: dict[int, tuple[str, float]] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(child.pid, seen, stop), daemon=True)
    watcher.start()
    _, err = child.communicate()
    wall = time.perf_counter() - started
    stop.set()
    watcher.join()
    reap_all(60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    exact = group.seconds()
    group.remove()
    if child.returncode != 0:
        raise SystemExit(f"{executor} run failed ({child.returncode}): {err.decode()[-2000:]}")
    answered = sum(1 for line in (out / "results.jsonl").read_text().splitlines() if json.loads(line).get("answer"))
    reaped = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    total = reaped if exact is None else exact
    split: dict[str, float] = defaultdict(float)
    for kind, cpu in seen.values():
        split[kind] += cpu
    split["driver (illusion-agent)"] = max(0.0, total - sum(split.values()))  # the rest: the driver itself
    return {"cpu": total, "reaped": reaped, "wall": wall, "answered": answered, "split": dict(split)}


class Idle:
    """A Ray actor that does nothing: what Ray's processes cost while no sample runs."""

    def pid(self) -> int:
        return os.getpid()


def idle_cost(seconds: float, workers: int) -> dict[str, float]:
    """CPU per wall second of each kind of Ray process with `workers` idle actors, once they are all up."""
    import ray
    from proctree import _stat, descendants

    def reading() -> dict[int, tuple[str, float]]:
        return {pid: (kind_of(pid), (int(f[11]) + int(f[12])) / TICKS)
                for pid in descendants(os.getpid()) - {os.getpid()} if (f := _stat(pid)) is not None}

    ray.init(num_cpus=workers, include_dashboard=False, logging_level="WARNING")
    try:
        actors = [ray.remote(Idle).remote() for _ in range(workers)]
        ray.get([a.pid.remote() for a in actors])
        time.sleep(5)  # start-up settles
        first, t0 = reading(), time.perf_counter()
        time.sleep(seconds)
        last, t1 = reading(), time.perf_counter()
    finally:
        ray.shutdown()
    rates: dict[str, float] = defaultdict(float)
    for pid, (kind, cpu) in last.items():
        if pid in first:
            rates[kind] += (cpu - first[pid][1]) / (t1 - t0)
    return dict(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="samples of the measured batch (default 2000)")
    parser.add_argument("--small", type=int, default=100, help="samples of the batch that prices the fixed cost")
    parser.add_argument("--workers", type=int, default=2, help="workers of both executors (default 2)")
    parser.add_argument("--concurrency", type=int, default=16, help="samples in flight (default 16)")
    parser.add_argument("--idle", type=float, metavar="SECONDS",
                        help="instead: CPU per second of Ray's processes with --workers idle actors, over SECONDS")
    args = parser.parse_args(argv)
    if args.idle:
        sys.path.insert(0, str(HERE))
        rates = idle_cost(args.idle, args.workers)
        print(f"Ray {args.workers} idle actors, CPU ms per wall second over {args.idle:g} s:\n")
        print("| process kind | CPU ms per second |\n|---|---:|")
        for kind, rate in sorted(rates.items()):
            print(f"| {kind} | {1000 * rate:.1f} |")
        print(f"| all | {1000 * sum(rates.values()):.1f} |")
        return 0
    if not 0 < args.small < args.samples:
        parser.error("--small must be above 0 and below --samples")
    sys.path.insert(0, str(HERE))
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    from trompe_agents.probes import generate

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        generate("illusions", n=args.samples, seed=0, size=128, out=work / "probes", progress=False)
        runs = {(e, n): one_run(e, args.workers, n, args.concurrency, work / "probes", work)
                for e in ("local", "ray") for n in (args.small, args.samples)}
    print(f"illusion-agent run --backend function, {args.workers} workers, concurrency {args.concurrency}; "
          f"CPU seconds of every process of the run (start-up and shut-down included)\n")
    print("| executor | samples | wall s | CPU s | CPU ms per sample | answered |")
    print("|---|---:|---:|---:|---:|---:|")
    for (e, n), r in runs.items():
        print(f"| {e} | {n} | {r['wall']:.1f} | {r['cpu']:.1f} | {1000 * r['cpu'] / n:.1f} | {r['answered']} |")
    per = {e: (runs[e, args.samples]["cpu"] - runs[e, args.small]["cpu"]) / (args.samples - args.small)
           for e in ("local", "ray")}
    fixed = {e: runs[e, args.samples]["cpu"] - per[e] * args.samples for e in ("local", "ray")}
    print("\n| executor | fixed CPU s (start-up, shut-down, idle) | CPU ms per further sample |\n|---|---:|---:|")
    for e in ("local", "ray"):
        print(f"| {e} | {fixed[e]:.1f} | {1000 * per[e]:.1f} |")
    print(f"\nCPU split at {args.samples} samples (seconds; from /proc every 0.2 s, the driver is the rest):\n")
    kinds = sorted({k for e in ("local", "ray") for k in runs[e, args.samples]["split"]})
    print("| process kind | local | ray |\n|---|---:|---:|")
    for k in kinds:
        print(f"| {k} | {runs['local', args.samples]['split'].get(k, 0):.1f} | "
              f"{runs['ray', args.samples]['split'].get(k, 0):.1f} |")
    ratio = runs["ray", args.samples]["cpu"] / runs["local", args.samples]["cpu"]
    print(f"\nray / local CPU at {args.samples} samples: {ratio:.2f}x (per further sample: "
          f"{per['ray'] / per['local']:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
