"""The sandbox against the host, as root (how CI, Docker and GPU images run SEVEX) and as an unprivileged user.

Nothing here changes host state: writability is tested by opening for writing or by setting the value a
file already has (chmod to its current mode), so even a wrongly allowed attempt leaves the host as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import pwd
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from attack_programs import UNGUARD, main
from sandbox_as_nobody import run_programs_as_nobody
from sandbox_support import descendants, require_os_sandbox, started_here, survivors, zombies

from trompe_agents.sevex import sandbox_frames
from trompe_agents.sevex.isolation import cgroup
from trompe_agents.sevex.sandbox import Sandbox, SandboxChild, SandboxLimits

AGENTS = Path(__file__).resolve().parents[2] / "agents"
API = {"crop": ["image", "box"], "ask_lvlm": ["images", "prompt"]}
LIMITS = SandboxLimits(wall_seconds=8, cpu_seconds=3, memory_bytes=512 * 1024 * 1024, disk_files=200)

# What a program sees of the host with the calls its filter allows; every attempt is made, each result (or error
# number) reported. (Changing a device node's mode is off the filter's list: CHMOD, below.)
LOOK = UNGUARD + main('''
import errno, json, os
seen = {"proc": os.path.exists("/proc"), "crop": crop("original", [0, 0, 1, 1])}
for path, mode in (("/proc/sys/kernel/core_pattern", "r+b"), ("/proc/sys/vm/min_free_kbytes", "r+b"),
                   ("/proc/1/mem", "r+b"), ("/dev/new", "wb")):
    try:
        open(path, mode).close()
        seen[path] = "writable"
    except OSError as exc:
        seen[path] = errno.errorcode[exc.errno]
made = 0
try:
    while made < 100000:
        open(f"f{made}", "w").close()
        made += 1
except OSError as exc:
    seen["files"] = [made, errno.errorcode[exc.errno]]
return json.dumps(seen)''')
CHMOD = UNGUARD + main("import os\nos.chmod('/dev/null', 0o666)\nreturn 'changed'")  # its own mode: a no-op
MEMFD = UNGUARD + main("import os\nos.memfd_create('x')\nreturn 'made a memfd'")
# a CPU limit the program lowers itself: refused, so its SIGXCPU could only ever be the sandbox's limit
EARLY_CPU = UNGUARD + main("import resource\nresource.setrlimit(resource.RLIMIT_CPU, (1, 2))\nwhile True:\n"
                           "    pass")


def check_look(seen: dict, limits: SandboxLimits) -> None:
    """What LOOK must find, whoever started the sandbox: no /proc, a read-only /dev."""
    assert seen["proc"] is False and seen["crop"] == "img_001"
    assert {seen[p] for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/min_free_kbytes", "/proc/1/mem")} \
        == {"ENOENT"}
    assert seen["/dev/new"] == "EROFS"
    made, error = seen["files"]
    assert made < limits.disk_files and error == "ENOSPC"


def uids(pid: int) -> set[int]:
    """Real, effective, saved and filesystem uids of a live process, from the host's /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return {int(value) for value in line.split()[1:]}
    raise AssertionError(f"no Uid line for {pid}")


async def test_no_process_of_the_sandbox_is_host_root_and_the_host_is_out_of_reach(subreaper):
    """Seen from the host while the program waits in a call: every process the sandbox consists of (launcher
    become bubblewrap, its init, the program) runs as an unprivileged host uid, even when we are root."""
    ours = os.getuid()
    expected = pwd.getpwnam("nobody").pw_uid if ours == 0 else ours
    seen_uids: list[set[int]] = []
    sandbox_pids: set[int] = set()

    async def crop(args):
        now = started_here()  # the sandbox's processes, not a root Redis an earlier test left in this worker
        sandbox_pids.update(now)
        seen_uids.extend(uids(pid) for pid in now)
        return "img_001"

    async with Sandbox(LIMITS, isolation=require_os_sandbox()) as box:
        result = await box.run(LOOK, "", ["original"], "", API, {"crop": crop, "ask_lvlm": crop})
    assert result.kind is None, result
    check_look(json.loads(result.answer), LIMITS)
    assert len(seen_uids) >= 3 and all(found == {expected} for found in seen_uids), seen_uids
    assert survivors() == set()
    # the launcher reaped its sandbox: none of its processes was orphaned to us, not even dead (other tests'
    # children may die and wait for their reaping meanwhile; only the sandbox's own pids count)
    assert zombies() & sandbox_pids == set()


async def test_a_launcher_signalled_again_while_it_ends_its_sandbox_still_reaps_bubblewrap(subreaper):
    """SEVEX signals a sandbox's group up to three times as it ends it (the run's end, its retirement, its
    close); wherever the next SIGTERM lands in the launcher, it reaps bubblewrap before it exits. A second
    one inside a Python handler's cleanup once cut that short: bubblewrap died of its parent-death signal
    unreaped, re-parented to us as a zombie (about one sandbox in six in a loop of runs)."""
    isolation = require_os_sandbox()
    job = {"code": main("return 'x'"), "prompt": "", "images": [], "question": "", "api": API}
    left: dict[float, set[int]] = {}
    for gap in [0.0] * 10 + [k * 5e-6 for k in range(1, 41)]:  # up to 200 µs after the first, where it hit
        worker = await SandboxChild.start(isolation, LIMITS)
        while not (ours := descendants(worker.process.pid)):  # bubblewrap, once the launcher has forked it
            await asyncio.sleep(0.001)
        result = await worker.run(job, {}, LIMITS)  # the first SIGTERM, as it returns
        assert result.kind is None, result
        until = time.perf_counter() + gap
        while time.perf_counter() < until:  # a busy wait: sleep() is too coarse for the first gaps
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.process.pid, signal.SIGTERM)
        await worker.close()
        if dead := zombies() & ours:  # only this sandbox's: other tests' orphans may die here meanwhile
            left[gap] = dead
            for pid in dead:
                os.waitpid(pid, 0)
    assert left == {}


async def test_memfds_mode_changes_and_a_lowered_cpu_limit_are_refused_and_recorded():
    """Each is a call off the filter's list: refused, recorded, `forbidden`; the lowered limit never a timeout."""
    limits = dataclasses.replace(LIMITS, wall_seconds=30, cpu_seconds=20)
    async with Sandbox(limits, isolation=require_os_sandbox()) as box:
        memfd = await box.run(MEMFD, "", [], "", API, {})
        chmod = await box.run(CHMOD, "", [], "", API, {})
        early = await box.run(EARLY_CPU, "", [], "", API, {})
    assert memfd.kind == "forbidden" and memfd.answer is None and "memfd_create(" in memfd.error
    assert chmod.kind == "forbidden" and "chmod(" in chmod.error
    assert early.kind == "forbidden" and "prlimit64(0, 0, " in early.error


async def test_the_parent_holds_only_bounded_pieces_of_what_a_program_sends():
    """A call's arguments are capped at FROM_PROGRAM bytes (their JSON costs the parent ~20x in objects) and
    only small ones are kept in the result."""
    async def crop(args):
        return "img_001"

    big_call = main("return crop('original', [[]] * 400000)")  # ~1.6 MB of JSON: 400,000 lists in the parent
    medium = main("crop('original', [0, 0, 1, 1])\nreturn crop('original', ['x' * 5000])")
    async with Sandbox(LIMITS, isolation=require_os_sandbox()) as box:
        refused = await box.run(big_call, "", ["original"], "", API, {"crop": crop})
        kept = await box.run(medium, "", ["original"], "", API, {"crop": crop})
    assert refused.kind == "oversize" and f"limit of {sandbox_frames.FROM_PROGRAM:,} bytes" in refused.error
    assert kept.kind is None and kept.calls[0] == {"name": "crop", "args": {"image": "original",
                                                                            "box": [0, 0, 1, 1]}}
    assert kept.calls[1]["args"] == f"<{len(json.dumps({'image': 'original', 'box': ['x' * 5000]})):,} bytes>"


async def test_a_program_that_stops_reading_is_killed_at_its_deadline_and_close_returns():
    """The reply it never reads fills the pipe; the wall limit still ends it and closing does not wait on it."""
    async def huge(args):
        return "x" * (15 * 1024 * 1024)

    stalled = UNGUARD + main('''
import json, os, struct, time
body = json.dumps({"type": "call", "name": "huge", "args": {}}).encode()
os.write(1, struct.pack(">I", len(body)) + body)
while True:  # blocks once the pipe is full: the parent is busy sending
    os.write(1, bytes(65536))''')
    started = time.monotonic()
    limits = SandboxLimits(wall_seconds=3, cpu_seconds=2)
    async with Sandbox(limits, isolation=require_os_sandbox()) as box:
        result = await box.run(stalled, "", [], "", {"huge": [], "crop": ["image"]}, {"huge": huge})
    assert result.kind == "program_timeout"
    assert time.monotonic() - started < 3 + 15
    assert survivors() == set()


def test_as_an_unprivileged_user_too():
    """Run as root, the same checks again from a process of user `nobody`."""
    look, memfd, chmod = run_programs_as_nobody([LOOK, MEMFD, CHMOD], LIMITS)
    assert look["kind"] is None, look
    check_look(json.loads(look["answer"]), LIMITS)
    assert memfd["kind"] == chmod["kind"] == "forbidden"


def test_a_root_caller_can_name_the_unprivileged_user(monkeypatch):
    """TROMPE_SANDBOX_USER picks the host user; root itself, or an unknown name, is refused before any start."""
    from trompe_agents.sevex.isolation import SandboxUnavailable
    from trompe_agents.sevex.isolation.bwrap import host_user

    monkeypatch.setenv("TROMPE_SANDBOX_USER", "root")
    with pytest.raises(SandboxUnavailable, match="TROMPE_SANDBOX_USER='root' is root"):
        host_user()
    monkeypatch.setenv("TROMPE_SANDBOX_USER", "no-such-user-here")
    with pytest.raises(SandboxUnavailable, match="is not a user on this machine"):
        host_user()
    monkeypatch.setenv("TROMPE_SANDBOX_USER", str(pwd.getpwnam("nobody").pw_uid))
    assert host_user() == (pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid)


POOL = '''
import asyncio, sys
from trompe_agents.sevex.sandbox import Sandbox, SandboxChild, SandboxLimits

async def start():
    box = Sandbox(SandboxLimits(), warm=3)
    box._refill()
    print("starting", flush=True)
    await asyncio.sleep(60)

asyncio.run(start())
'''


def test_sigkill_of_the_parent_while_its_pool_starts_leaves_no_sandbox(subreaper):
    """The launcher dies with its parent from its first instruction (parent-death signal, then a check that
    the parent is still the one that started it), and bubblewrap, pid 1 of the launcher's pid namespace,
    with the launcher, so a kill in any phase of a start orphans nothing; we are a child subreaper
    meanwhile, so an orphan would be re-parented here and found."""
    require_os_sandbox()
    env = os.environ | {"PYTHONPATH": str(AGENTS)}
    before = zombies()
    for delay in [0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5]:
        parent = subprocess.Popen([sys.executable, "-c", POOL], env=env, stdout=subprocess.PIPE, text=True)
        assert parent.stdout.readline() == "starting\n"
        time.sleep(delay)
        parent.kill()
        parent.wait()
        parent.stdout.close()
    assert survivors() == set()
    for pid in zombies() - before:  # the killed parents' launchers and bubblewraps, re-parented to us
        os.waitpid(pid, 0)
    cgroup.remove_abandoned()  # the killed SEVEX processes' sandbox cgroups, as a driver removes them


def test_a_launcher_killed_alone_while_bubblewrap_holds_its_new_init_leaves_no_sandbox(subreaper):
    """SIGKILL of the launcher alone (what the OOM killer does) at the worst moment of a start: bubblewrap has
    created the sandbox's init, which sets no parent-death signal until bubblewrap lets it go on, and which
    would wait for that forever once bubblewrap is dead. bubblewrap's --userns-block-fd holds it exactly
    there (after --info-fd says the init exists); bubblewrap's pid namespace must take the init with it."""
    launch = require_os_sandbox().launch(LIMITS)
    info_read, info_write = os.pipe()
    hold_read, hold_write = os.pipe()
    options = [arg for arg in launch.argv if arg != "--disable-userns"]  # bubblewrap refuses it with the hold
    at = options.index("--", options.index("--") + 1)  # the end of bubblewrap's options: ours come last
    argv = [*options[:at], "--info-fd", str(info_write), "--userns-block-fd", str(hold_read), *options[at:]]
    before = zombies()
    launcher = subprocess.Popen(argv, pass_fds=(*launch.pass_fds, info_write, hold_read), stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={}, start_new_session=True)
    for fd in (*launch.pass_fds, info_write, hold_read):
        os.close(fd)
    left: set[int] = set()
    try:
        with os.fdopen(info_read, "rb") as info:
            assert select.select([info], [], [], 30)[0] and b"child-pid" in info.read1(4096)  # the init exists
        os.kill(launcher.pid, signal.SIGKILL)
        launcher.wait()
        left = survivors(timeout=5)
        assert left == set()
    finally:
        for pid in left:  # an orphan would wait forever: never leave one on the machine
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        os.close(hold_write)
        launcher.stdin.close()
        for pid in zombies() - before:  # what died after being re-parented to us
            os.waitpid(pid, 0)
        launch.cleanup()  # its cgroup, where it has one
