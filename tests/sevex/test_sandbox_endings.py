"""How a program ended comes from facts the program cannot write, never from text it chose.

`forbidden` only from the filter's record of a refused call (the parent reads it from the filter's listener,
sandbox_listener.py; a malformed frame on the channel is `crashed`), a CPU timeout only from the kernel's count of the sandbox's CPU time (the launcher's
rusage), and a signal death only from the true wait status (bubblewrap's init reports death by signal N as
128 + N, and the filter refuses the program any exit status of 128 or more). Run as root, and again as user
`nobody`.
"""

from __future__ import annotations

import platform
import time

import pytest
from attack_programs import CHANNEL, RAW, UNGUARD, main
from sandbox_as_nobody import run_programs_as_nobody
from sandbox_support import require_os_sandbox

from trompe_agents.sevex import sandbox_syscalls
from trompe_agents.sevex.isolation.none import NoIsolation
from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits

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
PROGRAMS = [EXIT_159, EXIT_3, SELF_KILL, INIT_ATTACKED, FORK, THREAD, SEGV, CPU, NOT_ALLOWED_TEXT,
            SURROGATE_ANSWER, SURROGATE_LOG, FORGED_FORBIDDEN, USER_DISPATCH, STANDARD_LIBRARY, LAUNDERED,
            OWN_NAMESPACE, MALFORMED]


def check(results: list[tuple[str, str | None, str | None]]) -> None:
    """What each of PROGRAMS must end as: (kind, answer, error) in order."""
    (exit_159, exit_3, self_kill, init_attacked, fork, thread, segv, cpu, not_allowed, surrogate_answer,
     surrogate_log, forged, dispatch, standard_library, laundered, own_namespace,
     malformed) = results
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


async def test_endings_are_recorded_as_what_happened():
    started = time.monotonic()
    async with Sandbox(LIMITS, warm=1, isolation=require_os_sandbox()) as box:
        results = [await box.run(code, "", ["original"], "", API, {}) for code in PROGRAMS]
    check([(r.kind, r.answer, r.error) for r in results])
    assert "x\ufffdy" in results[PROGRAMS.index(SURROGATE_LOG)].log
    assert time.monotonic() - started < len(PROGRAMS) * LIMITS.wall_seconds  # none waited for its deadline


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
