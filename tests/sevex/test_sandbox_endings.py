"""How a program ended comes from what the program cannot write: its true wait status and the parent's clock.

bubblewrap's init reports a death by signal N as exit status 128 + N, so the seccomp filter refuses the program
any exit status of 128 or more and any way of sending itself SIGSYS (read as the filter's kill, `forbidden`) or
SIGXCPU (read as the CPU limit, `timeout`); the processes that report the status (bubblewrap's init inside, the
launcher outside) are out of its reach. Run as root, and again as user `nobody`.
"""

from __future__ import annotations

import json
import time

import pytest
from attack_programs import UNGUARD, main
from sandbox_as_nobody import run_programs_as_nobody
from sandbox_support import require_os_sandbox

from trompe_agents.sevex.isolation import seccomp
from trompe_agents.sevex.isolation.none import NoIsolation
from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits

LIMITS = SandboxLimits(wall_seconds=8, cpu_seconds=3, memory_bytes=512 * 1024 * 1024)
API = {"crop": ["image", "box"]}


def tries(*steps: str) -> str:
    """A program that makes every attempt (each a Python expression) and answers what each did."""
    body = "import errno, fcntl, json, os, signal, threading\nseen = []\n"
    for step in steps:
        body += (f"try:\n    {step}\n    seen.append('done')\nexcept OSError as exc:\n"
                 "    seen.append(errno.errorcode[exc.errno])\n")
    return UNGUARD + main(body + "return json.dumps(seen)")


# each forged ending, and what it must be recorded as instead
EXIT_159 = UNGUARD + main("import os\nos._exit(159)")  # bubblewrap's status for SIGSYS
EXIT_152 = UNGUARD + main("import os\nos._exit(128 + 24)")  # and for SIGXCPU
EXIT_3 = UNGUARD + main("import os\nos._exit(3)")
SELF_SIGNALS = tries("os.kill(os.getpid(), signal.SIGSYS)", "signal.raise_signal(signal.SIGSYS)",
                     "signal.pthread_kill(threading.get_ident(), signal.SIGXCPU)", "os.killpg(0, signal.SIGSYS)",
                     "signal.pidfd_send_signal(os.pidfd_open(os.getpid()), signal.SIGSYS)",
                     "fcntl.fcntl(0, 10, signal.SIGSYS)")  # F_SETSIG: the kernel would send it on I/O
# bubblewrap's init is the trusted side that reports the program's status: signals from inside its pid
# namespace do not reach it (no handler), so stopping or killing it neither wedges nor forges the ending
INIT_ATTACKED = UNGUARD + main("import os, signal\nfor s in (signal.SIGSTOP, signal.SIGKILL, signal.SIGTERM):\n"
                               "    os.kill(1, s)\nos._exit(159)")
FORK = UNGUARD + main("import os\nos.fork()\nreturn 'forked'")  # a real seccomp kill
SEGV = UNGUARD + main("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
PROGRAMS = [EXIT_159, EXIT_152, EXIT_3, SELF_SIGNALS, INIT_ATTACKED, FORK, SEGV]


def check(results: list[tuple[str, str | None, str | None]]) -> None:
    """What each of PROGRAMS must end as: (kind, answer, error) in order."""
    exit_159, exit_152, exit_3, self_signals, init_attacked, fork, segv = results
    # a refused exit falls through to glibc's abort instruction: a crash, never the signal it imitates
    assert exit_159[0] == exit_152[0] == "crashed" and "killed by SIGSEGV" in exit_159[2], (exit_159, exit_152)
    assert exit_3 == ("crashed", None, "the program's process ended unexpectedly (exit 3)")
    assert self_signals[0] == "ok" and json.loads(self_signals[1]) == ["EPERM"] * 6, self_signals
    assert init_attacked[0] == "crashed", init_attacked
    assert fork[0] == "forbidden" and "system call the sandbox does not allow" in fork[2]
    assert segv[0] == "crashed" and "killed by SIGSEGV" in segv[2]


async def test_endings_a_program_forges_are_recorded_as_what_happened():
    started = time.monotonic()
    async with Sandbox(LIMITS, warm=1, isolation=require_os_sandbox()) as box:
        results = [await box.run(code, "", ["original"], "", API, {}) for code in PROGRAMS]
    check([(r.kind, r.answer, r.error) for r in results])
    assert time.monotonic() - started < LIMITS.wall_seconds  # none waited for its deadline: nothing wedged


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


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_the_filter_names_every_call_it_rules_on_each_architecture(machine):
    """Each architecture's table numbers every call the filter refuses or reads the arguments of (a missing one
    would stop every sandbox starting there), and the program fits classic BPF's one-byte jumps."""
    _, numbers = seccomp.ARCHES[machine]
    ruled = {*seccomp.REFUSED, *seccomp.EXITS, *seccomp.SIGNAL_ARG, *seccomp.ARG_EQUALS}
    assert ruled <= set(numbers)
    program = seccomp.deny_filter(machine)
    assert program is not None and len(program) % 8 == 0 and len(program) // 8 < 256
