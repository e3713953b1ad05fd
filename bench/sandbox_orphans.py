"""Stress: start bubblewrap sandboxes the real way and end them at random moments; count what survives.

Issue 24. This process is a child subreaper, so whatever a sandbox leaves behind (an init whose bubblewrap
and launcher died) is re-parented here and found, with its state, instead of escaping to the host's pid 1.
Each round a SEVEX parent (a Python process using `Sandbox` from sandbox.py) fills a warm pool and, after a
random delay, it is ended one of the ways a user or the system ends it:

    cancel            its pool's starts are cancelled midway (Ctrl-C, a timeout around SEVEX's own code)
    close             Sandbox.close() while the pool starts
    parent-sigkill    SIGKILL of the parent (tests/sevex/test_sandbox_host.py's pool test)
    group-sigterm     SIGTERM to the parent's whole process group (what a shell or CI timeout sends)
    launcher-sigkill  SIGKILL to each launcher's process group (`kill -9 -PGID`, close()'s last resort)
    launcher-oom      SIGKILL to each launcher alone (what the OOM killer does)

Then it waits (pidfds, up to --wait seconds) and lists the survivors: every descendant still alive besides
the parent, by role (launcher, monitor, init, program), wchan, pid namespace pid and parent; each is `LEFT`
(an orphan) if still alive --grace seconds later, else `late` (slow to die on a loaded box). Then it kills
them, so one round's leftovers never count in the next. `--code DIR` runs a temporary copy of the package
with DIR's files (sandbox.py, launcher.py, bwrap.py, whichever are there) in place of the tree's:

    nice -n 5 python bench/sandbox_orphans.py --rounds 100 --load 3
    nice -n 5 python bench/sandbox_orphans.py --rounds 100 --load 3 --code /tmp/old_code
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from proctree import wait_gone

AGENTS = Path(__file__).resolve().parents[1] / "agents"
PLACES = {"sandbox.py": "sevex/sandbox.py", "launcher.py": "sevex/isolation/launcher.py",
          "bwrap.py": "sevex/isolation/bwrap.py"}  # a --code file -> where it goes in trompe_agents
MODES = ("cancel", "close", "parent-sigkill", "group-sigterm", "launcher-sigkill", "launcher-oom")
FRESH = {"parent-sigkill", "group-sigterm"}  # modes that end the parent: one parent per round
PR_SET_CHILD_SUBREAPER = 36

# The SEVEX parent. Fresh: fills its pool and waits to be killed. Otherwise: one round per delay read from
# stdin, answered "ended" once its pool is closed (so what is still alive then was left by the round).
PARENT = r'''
import asyncio, contextlib, os, signal, sys
from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits

mode, warm = sys.argv[1], int(sys.argv[2])

def launchers():
    pids = [int(p) for t in os.listdir("/proc/self/task") for p in open(f"/proc/self/task/{t}/children").read().split()]
    found = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if b"launcher.py" in open(f"/proc/{pid}/cmdline", "rb").read():
                found.append(pid)
    return found

async def one(delay):
    box = Sandbox(SandboxLimits(), warm=warm)
    box._refill()
    await asyncio.sleep(delay)
    if mode == "cancel":
        for task in box._ready:
            task.cancel()
        await asyncio.gather(*box._ready, return_exceptions=True)
        box._ready.clear()
    for pid in launchers() if mode.startswith("launcher") else []:
        with contextlib.suppress(ProcessLookupError):
            (os.killpg if mode == "launcher-sigkill" else os.kill)(pid, signal.SIGKILL)
    await box.close()

async def main():
    if mode in ("parent-sigkill", "group-sigterm"):
        box = Sandbox(SandboxLimits(), warm=warm)
        box._refill()
        print("starting", flush=True)
        await asyncio.sleep(120)
        return
    print("ready", flush=True)
    while line := await asyncio.to_thread(sys.stdin.readline):
        await one(float(line))
        print("ended", flush=True)

asyncio.run(main())
'''


def children(pid: int) -> list[int]:
    """The direct children of `pid` (all its threads'), from /proc; empty once it is gone."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return found
    for task in tasks:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return found


def field(pid: int, name: str) -> str:
    """One line of /proc/PID/status ('' if absent or gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(name + ":"):
                return line.split(":", 1)[1].strip()
    except (FileNotFoundError, ProcessLookupError):
        pass
    return ""


def alive(pid: int) -> bool:
    """Not gone and not a zombie."""
    return field(pid, "State")[:1] not in ("", "Z")


def descendants(root: int, skip: set[int]) -> list[int]:
    """Live processes below `root`, not descending into `skip` (the parent and the busy loops)."""
    found, todo = [], [root]
    while todo:
        for child in children(todo.pop()):
            if child in skip:
                continue
            if alive(child):
                found.append(child)
            todo.append(child)
    return found


def describe(pid: int, parent: int) -> str:
    """Role, wchan, NSpid and parent of a survivor: enough to tell where in a start it was left."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        wchan = Path(f"/proc/{pid}/wchan").read_text() or "-"
        inside = os.stat(f"/proc/{pid}/ns/uts").st_ino != os.stat("/proc/self/ns/uts").st_ino  # bubblewrap's
    except (FileNotFoundError, ProcessLookupError):
        return f"gone({pid})"
    nspid, uid, ppid = field(pid, "NSpid").split(), field(pid, "Uid").split()[:1], int(field(pid, "PPid") or 0)
    if any(b"launcher.py" in arg for arg in cmdline):
        role = "launcher"
    elif field(pid, "Name") == "bwrap":  # the sandbox's init is inside bubblewrap's namespaces, its monitor not
        role = "init" if inside else "monitor"
    else:
        role = "program" if inside else field(pid, "Name") or "gone"
    owner = "us" if ppid == os.getpid() else "parent" if ppid == parent else str(ppid)
    return (f"{role}(wchan={wchan}, NSpid={'/'.join(nspid)}, ppid={owner}, uid={''.join(uid)}, "
            f"children={len(children(pid))})")


def reap(keep: set[int]) -> None:
    """Reap zombies re-parented to us (orphans that died), leaving our own Popen children to Popen."""
    for child in children(os.getpid()):
        if child not in keep and not alive(child):
            try:
                os.waitpid(child, os.WNOHANG)
            except ChildProcessError:
                pass


def survivors(skip: set[int], parent: int, seconds: float, grace: float) -> list[str]:
    """What is still alive below us after `seconds`, described, and marked `late` if it ends within `grace`
    seconds more (slow to die on a loaded machine) else `LEFT` (an orphan); then killed, inits first (an
    init takes its pid namespace with it)."""
    wait_gone(descendants(os.getpid(), skip), seconds)
    left = descendants(os.getpid(), skip)
    described = [(pid, describe(pid, parent)) for pid in left]
    left = [pid for pid, text in described if not text.startswith("gone(")]  # it ended as we looked
    seen = [text for _, text in described if not text.startswith("gone(")]
    wait_gone(left, grace)
    seen = [("LEFT " if alive(pid) else "late ") + text for pid, text in zip(left, seen)]
    for pid, _ in sorted(zip(left, seen), key=lambda pair: "init(" not in pair[1]):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wait_gone(left, 5)
    reap(skip)
    return seen


def package(code: Path | None, folder: Path) -> Path:
    """The folder to put on PYTHONPATH: the tree's agents/, or a copy with `code`'s files in place."""
    if code is None:
        return AGENTS
    shutil.copytree(AGENTS / "trompe_agents", folder / "trompe_agents",
                    ignore=shutil.ignore_patterns("__pycache__"))
    placed = [name for name in PLACES if (code / name).exists()]
    if not placed:
        raise SystemExit(f"--code {code}: none of {', '.join(PLACES)} is there")
    for name in placed:
        shutil.copy(code / name, folder / "trompe_agents" / PLACES[name])
    print(f"code: {code} ({', '.join(placed)}) over a copy of the tree", flush=True)
    return folder


def spawn(mode: str, env: dict[str, str], warm: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", PARENT, mode, str(warm)], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)


def run_mode(mode: str, rounds: int, env: dict[str, str], args: argparse.Namespace, load: set[int]) -> list:
    """`rounds` rounds of one mode; each round's survivors (a list of descriptions)."""
    results = []
    parent = None if mode in FRESH else spawn(mode, env, args.warm)
    if parent is not None and parent.stdout.readline() != "ready\n":
        raise SystemExit(f"{mode}: the parent did not start")
    for _ in range(rounds):
        delay = random.uniform(0, args.max_delay)
        if parent is None:
            proc = spawn(mode, env, args.warm)
            if proc.stdout.readline() != "starting\n":
                raise SystemExit(f"{mode}: the parent did not start")
            time.sleep(delay)
            if mode == "parent-sigkill":
                proc.kill()
            else:
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            proc.stdout.close()
            proc.stdin.close()
            seen = survivors(load, proc.pid, args.wait, args.grace)
        else:
            parent.stdin.write(f"{delay}\n")
            parent.stdin.flush()
            if parent.stdout.readline() != "ended\n":
                raise SystemExit(f"{mode}: the parent failed (exit {parent.wait()})")
            seen = survivors(load | {parent.pid}, parent.pid, args.wait, args.grace)
        if seen:
            print(f"  {mode} delay {delay:.3f}s: {'; '.join(seen)}", flush=True)
        results.append(seen)
    if parent is not None:
        parent.stdin.close()
        parent.wait()
        parent.stdout.close()
        results[-1] += survivors(load, parent.pid, args.wait, args.grace)  # what the parent's exit did not end either
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50, help="rounds per mode")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    parser.add_argument("--code", type=Path, help="folder with sandbox.py/launcher.py/bwrap.py to run instead")
    parser.add_argument("--warm", type=int, default=3, help="sandboxes each pool starts")
    parser.add_argument("--max-delay", type=float, default=0.5, help="ends come uniformly in [0, this] seconds")
    parser.add_argument("--wait", type=float, default=5.0, help="seconds a survivor gets to exit on its own")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds more a survivor gets before it counts as left (not just slow)")
    parser.add_argument("--load", type=int, default=0, help="busy loops to run meanwhile")
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    modes = args.modes.split(",")
    if unknown := set(modes) - set(MODES):
        parser.error(f"--modes: unknown {sorted(unknown)}; choose from {', '.join(MODES)}")
    if args.rounds < 1 or args.warm < 1 or args.max_delay < 0 or args.wait < 0 or args.grace < 0:
        parser.error("--rounds and --warm must be at least 1, --max-delay, --wait and --grace at least 0")
    random.seed(args.seed)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))  # so the busy loops are stopped too
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("cannot become a child subreaper")
    busy = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(args.load)]
    table: dict[str, list] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="sandbox-orphans-") as folder:
            env = os.environ | {"PYTHONPATH": str(package(args.code, Path(folder)))}
            for mode in modes:
                started = time.monotonic()
                table[mode] = run_mode(mode, args.rounds, env, args, {p.pid for p in busy})
                print(f"{mode}: {sum(map(bool, table[mode]))}/{args.rounds} rounds left survivors "
                      f"({time.monotonic() - started:.0f} s)", flush=True)
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    print(f"\ncode: {args.code or 'tree'}, warm {args.warm}, delays 0-{args.max_delay} s, load {args.load}, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| mode | rounds | rounds with survivors | left (orphans) | late (ended within --grace) | what |\n"
          "|---|---:|---:|---:|---:|---|")
    for mode, results in table.items():
        everything = [text for seen in results for text in seen]
        kinds = collections.Counter(text.split(", NSpid")[0] + ")" for text in everything)
        what = ", ".join(f"{n}× {kind}" for kind, n in kinds.most_common()) or "-"
        left = sum(text.startswith("LEFT") for text in everything)
        print(f"| {mode} | {len(results)} | {sum(map(bool, results))} | {left} | {len(everything) - left} | {what} |")

if __name__ == "__main__":
    main()
