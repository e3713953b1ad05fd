"""A cgroup per sandbox where the host lets SEVEX make one (root here, v1 memory and pids; v2 where delegated):
memory the address-space limit never sees (the work tmpfs, the kernel's) is bounded, an OOM kill or a refused
fork is read from the cgroup's own counters, and no folder outlives its sandbox, however it ended. As user
`nobody` there is none, and `sevex` says so and says what holds instead.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from attack_programs import main
from leftovers import cgroup_folders
from proctree import descendants
from sandbox_as_nobody import bounds_as_nobody, run_programs_as_nobody
from sandbox_support import require_os_sandbox, zombies

from trompe_agents.sevex.isolation import cgroup
from trompe_agents.sevex.sandbox import Sandbox, SandboxChild, SandboxLimits

AGENTS = Path(__file__).resolve().parents[2] / "agents"
# the cgroup's bound far below the address-space limit, so only the cgroup can stop these programs
LIMITS = SandboxLimits(wall_seconds=30, memory_bytes=1024 * 2**20, cgroup_memory_bytes=128 * 2**20)
ALLOCATE = main("data = b'x' * (400 * 2**20)\nreturn str(len(data))")  # touched pages, under RLIMIT_AS
FILL_DISK = main("for i in range(60):\n    with open(f'f{i}', 'wb') as f:\n        f.write(b'x' * 2**20)\n"
                 "return 'wrote 60 MiB'")  # the work tmpfs: no address space at all
SMALL = main("data = b'x' * (40 * 2**20)\nreturn str(len(data))")


def layout() -> cgroup.Layout:
    """Where sandboxes get their cgroups here; a skip saying why when none can be made (as an unprivileged
    user without a delegated cgroup v2)."""
    require_os_sandbox()
    where = cgroup.layout()
    if isinstance(where, str):
        pytest.skip(f"no cgroup for sandboxes here: {where}")
    return where


def own_folders() -> set[Path]:
    """This process's sandbox cgroups, listed from the cgroup file system."""
    return {folder for folder in cgroup_folders() if folder.name.startswith(f"{cgroup.PREFIX}{os.getpid()}-")}


async def test_memory_past_the_cgroup_bound_ends_as_memory_from_the_kernels_count():
    """400 MiB of bytes, and 60 MiB of files in the work tmpfs, both within every rlimit, each end as
    `memory` under a 128 MiB (bytes) or 64 MiB (files) cgroup: the kernel's OOM killer ended the sandbox
    and its count (oom_kill) says so; a program within the bound runs."""
    where = layout()
    async with Sandbox(LIMITS, isolation=require_os_sandbox()) as box:
        allocated = await box.run(ALLOCATE, "", [], "", {}, {})
        small = await box.run(SMALL, "", [], "", {}, {})
    disk = SandboxLimits(wall_seconds=30, cgroup_memory_bytes=64 * 2**20)
    async with Sandbox(disk, isolation=require_os_sandbox()) as box:
        filled = await box.run(FILL_DISK, "", [], "", {}, {})
    counter = "memory.events" if where.version == 2 else "memory.oom_control"
    assert counter == where.oom_counter
    for result, bound in ((allocated, 128), (filled, 64)):
        assert result.kind == "memory", result
        assert result.error.startswith(f"the sandbox's memory bound ({bound} MiB, kernel memory included) was "
                                       "reached: the kernel's OOM killer ended it (cgroup oom_kill "), result.error
    assert (small.kind, small.answer) == (None, str(40 * 2**20))
    assert own_folders() == set()


async def test_a_sandbox_over_its_process_bound_is_refused_by_the_kernel_and_says_so():
    """pids.max 4 cannot hold the launcher, its pid 1, bubblewrap and the sandbox's init: the kernel refuses
    a fork, counts it (pids.events max), and the sample says that, not a bare crash."""
    layout()
    async with Sandbox(SandboxLimits(wall_seconds=30, processes=4), isolation=require_os_sandbox()) as box:
        result = await box.run(SMALL, "", [], "", {}, {})
    assert result.kind == "crashed", result
    assert result.error.startswith("the sandbox did not start: the sandbox's process bound (4) was reached: "
                                   "the kernel refused new processes (cgroup pids.events max "), result.error
    assert own_folders() == set()


async def test_no_cgroup_outlives_its_sandbox_after_an_answer_a_cancel_or_a_kill():
    """Each sandbox's folders exist while it runs (the launcher is in them) and are gone once it ends: after an
    answer, a cancelled run, a warm sandbox never used, and a launcher killed with SIGKILL mid-run."""
    layout()
    box = Sandbox(SandboxLimits(wall_seconds=30), warm=2, isolation=require_os_sandbox())

    async def forever(args):
        await asyncio.sleep(60)

    code = main("return crop('original', [0, 0, 1, 1])")
    api = {"crop": ["image", "box"]}
    assert (await box.run(main("return 'x'"), "", [], "", {}, {})).answer == "x"
    waiting = asyncio.ensure_future(box.run(code, "", [], "", api, {"crop": forever}))
    deadline = time.monotonic() + 20
    while len(own_folders()) < 3 * len(cgroup.layout().parents) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)  # the waiting program's and two warm ones
    assert len(own_folders()) == 3 * len(cgroup.layout().parents)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    await box.close()
    assert own_folders() == set()

    worker = await SandboxChild.start(require_os_sandbox(), SandboxLimits(wall_seconds=30))
    assert {Path(p).parent for p in worker.launch.cgroup.joins} <= own_folders()
    spin = main("while True:\n    pass")
    running = asyncio.ensure_future(worker.run({"code": spin, "prompt": "", "images": [], "question": "",
                                                "api": {}}, {}, SandboxLimits(wall_seconds=30)))
    while worker.record is None:  # the job has gone in
        await asyncio.sleep(0.05)
    tree = descendants(worker.process.pid)  # launcher, its pid 1, bubblewrap, its init, the child spinning
    assert len(tree) >= 5
    for folder in worker.launch.cgroup.folders:  # the launcher joined one thread; every process came in with it
        assert tree <= {int(pid) for pid in _members(folder)}, folder
    os.kill(worker.process.pid, signal.SIGKILL)  # the launcher: its sandbox dies with it
    assert (await running).kind == "crashed"
    await worker.close()
    assert own_folders() == set()


POOL = '''
import asyncio
from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits

async def start():
    box = Sandbox(SandboxLimits(), warm=2)
    await box.run("def main(images, question):\\n    return 'ready'", "", [], "", {}, {})
    print("ready", flush=True)
    await asyncio.sleep(60)

asyncio.run(start())
'''


def test_the_cgroups_of_a_killed_sevex_are_removed_by_the_next_one(subreaper):
    """SIGKILL of SEVEX leaves its warm sandboxes' folders (their processes die with it); the next sandbox
    made removes every one whose owner pid has no process, and nothing else."""
    layout()
    env = os.environ | {"PYTHONPATH": str(AGENTS)}
    before = zombies()
    parent = subprocess.Popen([sys.executable, "-c", POOL], env=env, stdout=subprocess.PIPE, text=True)
    assert parent.stdout.readline() == "ready\n"
    abandoned = {f for f in cgroup_folders() if f.name.startswith(f"{cgroup.PREFIX}{parent.pid}-")}
    parent.kill()
    parent.wait()
    parent.stdout.close()
    assert abandoned, "the killed SEVEX's warm sandboxes had cgroups"
    deadline = time.monotonic() + 15
    while any(_members(f) for f in abandoned) and time.monotonic() < deadline:
        time.sleep(0.05)  # its sandboxes are dying with it
    kept = cgroup.SandboxCgroup.make(cgroup.layout(), 64 * 2**20, 4)
    try:
        assert not any(f.exists() for f in abandoned)
        assert all(f.exists() for f in kept.folders)
    finally:
        assert kept.remove()
        for pid in zombies() - before:  # the killed SEVEX's launchers, re-parented to us
            os.waitpid(pid, 0)


def _members(folder: Path) -> list[str]:
    """The pids in a cgroup; none once it is removed (a sandbox made by a test beside this one sweeps it too)."""
    try:
        return (folder / "cgroup.procs").read_text().split()
    except FileNotFoundError:
        return []


def test_as_an_unprivileged_user_the_sandbox_runs_without_a_cgroup_and_says_so():
    """User nobody may make no cgroup here: `sevex` says so once, with what bounds hold instead, and the
    programs run, bounded by their rlimits (400 MiB of bytes fits RLIMIT_AS; 2 GiB does not)."""
    line = bounds_as_nobody(LIMITS)
    assert line.startswith("sandbox bounds (no cgroup ("), line
    assert "so no bound on the sandbox's kernel memory but the filter's): memory by RLIMIT_AS (1,024 MiB)" in line
    big = main("data = b'x' * (2048 * 2**20)\nreturn 'allocated'")
    allocated, over = run_programs_as_nobody([ALLOCATE, big], LIMITS)
    assert (allocated["kind"], allocated["answer"]) == (None, str(400 * 2**20)), allocated
    assert over["kind"] == "memory" and over["error"].startswith("memory limit reached: the program asked for "
                                                                 "2,048 MiB more with "), over


def test_sevex_says_which_cgroup_bounds_its_sandboxes():
    """The one line `sevex explore` and `sevex apply` print names the cgroup, its folders and its limits."""
    where = layout()
    line = require_os_sandbox().bounds(LIMITS)
    assert line.startswith(f"sandbox bounds (cgroup v{where.version} per sandbox under {where.memory}"), line
    assert f"{where.memory_limit} 128 MiB (kernel " in line and "pids.max 16)" in line, line
    assert "memory by the cgroup and RLIMIT_AS (1,024 MiB)" in line, line
