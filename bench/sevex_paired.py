"""The OS sandbox's cost per program, this checkout against an earlier tree, paired: wall and CPU time.

    python bench/sevex_paired.py --baseline 88520d6 [--rounds 10] [--programs 10] [--cgroup-parts]

Each round runs one process per variant, the variants in turn (which goes first rotates), that starts
--programs programs, each in a fresh bubblewrap sandbox (cold start, run, kill, clean up; the probe sandbox
bubblewrap's check starts too), so every per-program cost of the sandbox is in it: the launcher, the filter and
its listener, the cgroup where one can be had, the child's start. A process's wall time is from its start to
its exit, its CPU time the kernel's count for it and every process it reaped (the sandboxes, launcher down:
os.wait4). Each round also runs, per variant, a process that starts no program (imports and the probe
sandbox), so the per-program rows are (the first - the second) / --programs: the sandbox's cost alone, without
the interpreter's start. The variants: the baseline tree, this checkout, and this checkout with no cgroup
(`cgroup.layout` says none, as for a user who has none), to show what the per-sandbox cgroup costs apart from
the rest; with --cgroup-parts, two more join only the memory or only the pids cgroup (cgroup v1, where they
are two folders), to show which of the two it is. The ratios are taken round by round, so a load that changes
over minutes touches both sides of each pair alike; the table gives each variant's median and the median of
the ratios. The baseline is `git archive REF` of servers/, plugins/ and agents/, first on the child's
PYTHONPATH (the child checks where its sandbox came from).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memory_admission import extract

REPO = Path(__file__).resolve().parents[1]
# an answer, a tool call, a little computation: what every visual prompt does, in the API both trees have
PROGRAMS = ["def main(images, question):\n    return 'yes'\n",
            "def main(images, question):\n    return crop(images[0], [0, 0, 4, 4])\n",
            "def main(images, question):\n    return str(sum(i * i for i in range(100_000)))\n"]
ANSWERS = ["yes", "img_001", str(sum(i * i for i in range(100_000)))]
CHILD = """import asyncio, json, sys
from trompe_agents.sevex import sandbox
from trompe_agents.sevex.isolation.bwrap import Bwrap
PROGRAMS, ANSWERS, COUNT, CGROUP = json.loads(sys.argv[1])
if CGROUP != "both":  # (the baseline has no cgroup module)
    from trompe_agents.sevex.isolation import cgroup
if CGROUP == "none":
    cgroup.layout = lambda: "none, for the comparison"
elif CGROUP != "both":  # the launcher joins only this controller's folder (v1: memory first, then pids)
    JOINED = {"memory": 0, "pids": -1}[CGROUP]
    cgroup.SandboxCgroup.joins = property(lambda group: [str(group.folders[JOINED] / group.layout.join_file)])

async def crop(args):
    return "img_001"

async def main():
    isolation = Bwrap()
    reason = isolation.unavailable()
    assert reason is None, reason
    for i in range(COUNT):  # (0: only the imports and the probe)
        async with sandbox.Sandbox(sandbox.SandboxLimits(), isolation=isolation) as box:
            result = await box.run(PROGRAMS[i % 3], "", ["original"], "", {"crop": ["image", "box"]}, {"crop": crop})
        assert result.answer == ANSWERS[i % 3], result

asyncio.run(main())
print(sandbox.__file__)
"""


def one_process(pythonpath: str, programs: int, joins: str) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (the process and all it reaped) and where its sandbox module came from."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": pythonpath}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        arguments = json.dumps([PROGRAMS, ANSWERS, programs, joins])
        child = subprocess.Popen([sys.executable, "-c", CHILD, arguments], env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)  # reaped here, with its rusage, not by Popen
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode:
            raise SystemExit(f"a child failed (exit {child.returncode}):\n{err.read()[-3000:]}")
        origin = out.read().strip().splitlines()[-1]
    return wall, usage.ru_utime + usage.ru_stime, origin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REF", required=True, help="the earlier tree, a git ref")
    parser.add_argument("--rounds", type=int, default=10, help="rounds of processes (default 10)")
    parser.add_argument("--programs", type=int, default=10, help="programs per process, one sandbox each (default 10)")
    parser.add_argument("--cgroup-parts", action="store_true", help="also join only the memory or the pids cgroup")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trompe-bench-") as tmp:
        os.chmod(tmp, 0o755)  # the sandbox's user (nobody, when run as root) reads the baseline's child modules
        before = extract(args.baseline, Path(tmp), ("servers", "plugins", "agents"))
        after = os.pathsep.join(str(REPO / part) for part in ("servers", "plugins", "agents"))
        variants = {args.baseline: (before, "both"), "this checkout": (after, "both"),
                    "this, no cgroup": (after, "none")}
        if args.cgroup_parts:
            variants |= {"this, memory cgroup only": (after, "memory"), "this, pids cgroup only": (after, "pids")}
        # variant -> rows: wall and CPU of the whole process, then per program; one value per round
        rows: dict[str, list[list[float]]] = {name: [[], [], [], []] for name in variants}
        for round_ in range(args.rounds):
            names = list(variants)
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:  # each goes first in turn
                empty, full = (measured(name, *variants[name], count) for count in (0, args.programs))
                for row, value in zip(rows[name], (*full, *((f - e) / args.programs for f, e in zip(full, empty)))):
                    row.append(value)
            print(f"round {round_ + 1}: " + ", ".join(f"{name} {[round(row[-1], 3) for row in rows[name]]}"
                                                      for name in rows), file=sys.stderr)
    print(f"| median of {args.rounds} rounds | {' | '.join(variants)} | "
          + " | ".join(f"{name} / {args.baseline}" for name in list(variants)[1:])
          + " |\n|---|" + "---:|" * (2 * len(variants) - 1))
    labels = (f"wall s, a process starting {args.programs} programs", "CPU s, the same (with all it reaped)",
              "wall s per program (sandbox alone)", "CPU s per program (sandbox alone)")
    for index, label in enumerate(labels):
        base, *others = (rows[name][index] for name in variants)
        medians = " | ".join(f"{statistics.median(values):.3f}" for values in (base, *others))
        ratios = " | ".join(f"{statistics.median(a / b for a, b in zip(values, base, strict=True)):.3f}"
                            for values in others)
        print(f"| {label} | {medians} | {ratios} |")


def measured(name: str, pythonpath: str, joins: str, programs: int) -> tuple[float, float]:
    """One process's wall and CPU seconds, refused if its sandbox module is not from `pythonpath`."""
    wall, cpu, origin = one_process(pythonpath, programs, joins)
    if not origin.startswith(pythonpath.split(os.pathsep)[-1]):
        raise SystemExit(f"{name}: the sandbox came from {origin}, not from {pythonpath}")
    return wall, cpu


if __name__ == "__main__":
    main()
