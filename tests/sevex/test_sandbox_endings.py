"""How a program ended comes from facts the program cannot write, never from text it chose.

`forbidden` only from the filter's record of a refused call (the parent reads it from the filter's listener,
sandbox_listener.py; a malformed frame on the channel is `crashed`), `memory` only from what that listener saw
of the program's mappings or the cgroup's OOM kills, a CPU timeout only from the kernel's count of the sandbox's
CPU time (the launcher's rusage), and a signal death only from the true wait status (bubblewrap's init reports
death by signal N as 128 + N, and the filter refuses the program any exit status of 128 or more). Run as root,
and again as user `nobody`.
"""

from __future__ import annotations

import platform
import re
import resource
import time

import pytest
from attack_programs import CHANNEL, RAW, UNGUARD, main
from sandbox_as_nobody import run_programs_as_nobody
from sandbox_support import require_os_sandbox

from trompe_agents.sevex import sandbox_syscalls
from trompe_agents.sevex.isolation.none import NoIsolation
from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits
from trompe_agents.sevex.sandbox_listener import STOP_AFTER

LIMITS = SandboxLimits(wall_seconds=20, cpu_seconds=2, memory_bytes=512 * 1024 * 1024)
API = {"crop": ["image", "box"]}

EXIT_159 = UNGUARD + main("import os\nos._exit(159)")  # bubblewrap's status for SIGSYS
EXIT_3 = UNGUARD + main("import os\nos._exit(3)")
SELF_KILL = UNGUARD + main("import os\nos.kill(os.getpid(), 9)")
INIT_ATTACKED = UNGUARD + main("import os, signal\nfor s in (signal.SIGSTOP, signal.SIGKILL, signal.SIGTERM):\n"
                               "    os.kill(1, s)\nreturn 'sent'")
FORK = UNGUARD + main("import os\nos.fork()\nreturn 'forked'")
THREAD = UNGUARD + main("import threading\nthreading.Thread(target=print).start()\nreturn 'started'")
SEGV = RAW + main("_Function(8)()")  # a call to address 8: a real SIGSEGV, no kill() needed
CPU = main("while True:\n    pass")
NOT_ALLOWED_TEXT = main("raise ValueError('negative sizes are not allowed')")
SURROGATE_ANSWER = main("return 'a\\udc80b'")
SURROGATE_LOG = main("print('x\\ud800y')\nreturn 'fine'")
FORGED_FORBIDDEN = CHANNEL + main(
    "forge(b'{\"type\": \"error\", \"kind\": \"forbidden\", \"error\": \"escaped\", \"log\": \"\"}')\nreturn 'x'")
# the kernel would send SIGSYS for every call from then on; the filter refuses the prctl itself
USER_DISPATCH = RAW + main(f'''
print(syscall({sandbox_syscalls.ARCHES[platform.machine()][1]["prctl"]}, 59, 1, 0, 0, 0))
return "dispatching"''')
# the standard library importing for itself (heapq, types) inside an allowed module: not the program's import
STANDARD_LIBRARY = main("import collections, functools, statistics\n@functools.singledispatch\ndef kind(x):\n"
                        "    return 'other'\nreturn repr((statistics.mode([1, 2, 2, 3]), "
                        "collections.Counter('abca').most_common(1), kind(2)))")
# a module's namespace passed on purpose gets only a module already loaded; loading one is refused
LAUNDERED = main("import statistics\nheap = __import__('heapq', vars(statistics))\n"
                 "return repr(__import__('ctypes', vars(statistics)))")
OWN_NAMESPACE = main("exec('import heapq', {})\nreturn 'imported'")
MALFORMED = CHANNEL + main("forge(b'{\"type\": \"done\"}')\nreturn 'x'")  # only allowed calls: no refusal
# `memory` only from a fact: a mapping the filter's listener saw go over the limit, or a peak near it
RAISED_MEMORY = main("raise MemoryError('x')")
FORGED_MEMORY = CHANNEL + main(
    "forge(b'{\"type\": \"error\", \"kind\": \"memory\", \"error\": \"out\", \"log\": \"\"}')\nreturn 'x'")
MEMORY_BOMB = main("return len(bytearray(8 * 1024 ** 3))")
MEMORY_GROWTH = main("kept = []\nwhile True:\n    kept.append(bytearray(100_000))")
BIG_ENOUGH = main("return str(len(bytearray(100 * 2 ** 20)))")  # checked by the listener, and goes on
# a refused call in a loop: stopped after STOP_AFTER refusals, not at its limits
REFUSAL_FLOOD = RAW + main(f"while True:\n    syscall({sandbox_syscalls.ARCHES[platform.machine()][1]['getppid']})")
PROGRAMS = [EXIT_159, EXIT_3, SELF_KILL, INIT_ATTACKED, FORK, THREAD, SEGV, CPU, NOT_ALLOWED_TEXT,
            SURROGATE_ANSWER, SURROGATE_LOG, FORGED_FORBIDDEN, USER_DISPATCH, STANDARD_LIBRARY, LAUNDERED,
            OWN_NAMESPACE, MALFORMED, RAISED_MEMORY, FORGED_MEMORY, MEMORY_BOMB, MEMORY_GROWTH, BIG_ENOUGH,
            REFUSAL_FLOOD]


def check(results: list[tuple[str, str | None, str | None]]) -> None:
    """What each of PROGRAMS must end as: (kind, answer, error) in order."""
    (exit_159, exit_3, self_kill, init_attacked, fork, thread, segv, cpu, not_allowed, surrogate_answer,
     surrogate_log, forged, dispatch, standard_library, laundered, own_namespace,
     malformed, raised_memory, forged_memory, memory_bomb, memory_growth, big_enough, flood) = results
    assert exit_159[0] == "forbidden" and "exit_group(159, " in exit_159[2], exit_159
    assert exit_3 == ("crashed", None, "the program's process ended unexpectedly (exit 3)")
    assert self_kill[0] == "forbidden" and "kill(" in self_kill[2], self_kill
    assert "memory" not in self_kill[2] and "CPU" not in self_kill[2]
    assert init_attacked[0] == "forbidden" and "kill(1, 19, " in init_attacked[2], init_attacked
    assert fork[0] == thread[0] == "forbidden" and "clone(" in fork[2], (fork, thread)  # (a thread's stack first)
    assert segv[0] == "crashed" and "killed by SIGSEGV after " in segv[2], segv
    assert cpu[0] == "program_timeout" and "CPU time limit reached" in cpu[2], cpu
    assert not_allowed == ("exception", None, "ValueError: negative sizes are not allowed")
    assert surrogate_answer == ("exception", None, "the answer is not valid Unicode text: a lone surrogate at "
                                                   "index 1")
    assert surrogate_log[:2] == (None, "fine"), surrogate_log
    assert forged[0] == "exception" and forged[2] == "escaped", forged  # its word, which no refusal bears out
    assert dispatch[0] == "forbidden" and "prctl(59, 1, " in dispatch[2], dispatch
    assert standard_library == (None, "(2, [('a', 2)], 'other')", None), standard_library
    assert laundered[:2] == ("forbidden", None) and "not allowed in the sandbox: import" in laundered[2], laundered
    assert own_namespace[:2] == ("forbidden", None) and "import of 'heapq' is not allowed" in own_namespace[2]
    assert malformed == ("crashed", None, "the program wrote a malformed result to the sandbox's channel: unexpected "
                                          "message with keys ['type']"), malformed
    assert raised_memory == ("exception", None, "MemoryError: x")
    assert forged_memory == ("exception", None, "out")
    assert memory_bomb[0] == "memory" and "asked for 8,192 MiB more with " in memory_bomb[2], memory_bomb
    assert "over its 512 MiB limit (mmap refused ENOMEM)" in memory_bomb[2]
    assert memory_growth[0] == "memory" and re.search(r"reached \d+ MiB of its 512 MiB limit \(its peak, VmPeak\)",
                                                      memory_growth[2]), memory_growth
    assert big_enough == (None, str(100 * 2 ** 20), None)
    assert flood[0] == "forbidden" and "getppid(" in flood[2], flood
    assert flood[2].endswith(f"...) ({STOP_AFTER} in all), then stopped after {STOP_AFTER}"), flood


async def test_endings_are_recorded_as_what_happened():
    started = time.monotonic()
    async with Sandbox(LIMITS, warm=1, isolation=require_os_sandbox()) as box:
        results = [await box.run(code, "", ["original"], "", API, {}) for code in PROGRAMS]
    check([(r.kind, r.answer, r.error) for r in results])
    assert "x\ufffdy" in results[PROGRAMS.index(SURROGATE_LOG)].log
    assert time.monotonic() - started < len(PROGRAMS) * LIMITS.wall_seconds  # none waited for its deadline


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def test_a_refusal_flood_costs_the_driver_a_bounded_time():
    """Each refusal costs this process (the filter's listener) a read and an answer; a program looping refused
    calls made 213,452 in 20 s and cost it 5.15 s of CPU. Stopped after STOP_AFTER, it costs what a start does."""
    async with Sandbox(LIMITS, warm=1, isolation=require_os_sandbox()) as box:
        await box.run(BIG_ENOUGH, "", ["original"], "", API, {})  # a program that is no flood: a start's cost
        before = own_cpu_seconds()
        quiet = await box.run(BIG_ENOUGH, "", ["original"], "", API, {})
        one_run = own_cpu_seconds() - before
        before = own_cpu_seconds()
        flood = await box.run(REFUSAL_FLOOD, "", ["original"], "", API, {})
        flooded = own_cpu_seconds() - before
    assert quiet.answer and flood.kind == "forbidden" and f"({STOP_AFTER} in all)" in flood.error, flood
    assert flooded < one_run + 1.0, (flooded, one_run)  # 16 refusals take well under a millisecond


def test_as_an_unprivileged_user_too():
    """Run as root, the same programs again from a process of user `nobody`."""
    check([(r["kind"], r["answer"], r["error"]) for r in run_programs_as_nobody(PROGRAMS, LIMITS)])


@pytest.mark.parametrize(("code", "kind", "error"), [
    (EXIT_159, "crashed", "the program's process ended unexpectedly (exit 159)"),
    (SEGV, "crashed", "the program's process was killed by SIGSEGV"),
])
async def test_without_isolation_an_exit_status_is_never_read_as_a_signal(code, kind, error):
    """`--sandbox none` runs the child itself: its signal is the negative return code, 159 is just 159."""
    async with Sandbox(LIMITS, isolation=NoIsolation()) as box:
        result = await box.run(code, "", [], "", API, {})
    assert (result.kind, result.error) == (kind, error)
