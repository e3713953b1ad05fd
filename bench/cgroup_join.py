"""How long a process takes to write itself into a fresh sandbox cgroup: whole (`cgroup.procs`) or one thread (`tasks`).

    python bench/cgroup_join.py [--tries 12] [--gap 0.3]

Each try makes a sandbox's folders where SEVEX makes them (isolation/cgroup.py's layout: root's cgroup v1
memory and pids, or a delegated v2 folder), starts `python -I -S` to write itself into each (its pid into
`cgroup.procs`, `0` into `cgroup.procs`, `0` into v1's `tasks`: the launcher's way), timed inside that process,
and removes the folders. The tries are --gap seconds apart, as a SEVEX's sandboxes are: a move that comes right
after another skips the RCU grace period a whole-process move otherwise waits for, which a tight loop would
hide. Prints the median and range of each way, in ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from trompe_agents.sevex.isolation import cgroup

JOIN = """import json, os, sys, time
start = time.perf_counter()
for path in sys.argv[2:]:
    with open(path, "w") as f:
        f.write(str(os.getpid()) if sys.argv[1] == "pid" else "0")
print(json.dumps((time.perf_counter() - start) * 1000))
"""


def one_try(layout: cgroup.Layout, file: str, writes: str) -> float:
    """ms for a fresh process to write itself into a fresh group's `file` in each hierarchy."""
    group = cgroup.SandboxCgroup.make(layout, 64 * 2**20, 16)
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", JOIN, writes,
                               *(str(folder / file) for folder in group.folders)],
                              capture_output=True, text=True, check=True, timeout=60)
        return json.loads(done.stdout)
    finally:
        group.remove()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=12)
    parser.add_argument("--gap", type=float, default=0.3, help="seconds between tries")
    args = parser.parse_args()
    layout = cgroup.layout()
    if isinstance(layout, str):
        sys.exit(f"no cgroup for sandboxes here: {layout}")
    ways = [("cgroup.procs", "pid"), ("cgroup.procs", "0")] + ([("tasks", "0")] if layout.version == 1 else [])
    times: dict[tuple[str, str], list[float]] = {way: [] for way in ways}
    for _ in range(args.tries):
        for way in ways:  # in turn, so a load that changes touches each alike
            time.sleep(args.gap)
            times[way].append(one_try(layout, *way))
    print(f"cgroup v{layout.version} under {layout.memory}, {args.tries} tries each, {args.gap} s apart")
    print("| written | median ms | min ms | max ms |")
    print("|---|---:|---:|---:|")
    for (file, writes), each in times.items():
        print(f"| {'its pid' if writes == 'pid' else '0'} into {file} | {statistics.median(each):.2f} | "
              f"{min(each):.2f} | {max(each):.2f} |")


if __name__ == "__main__":
    main()
