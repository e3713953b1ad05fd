"""The sandbox's allow-list filter, through the real sandbox: a call off the list never runs, and is recorded.

Each attack is the real call (by number, through ctypes, with the guard switched off), made inside bubblewrap;
the parent's record names it and the run is `forbidden`; what the call returned is in the program's log.
Run as root, and again as user `nobody`.
"""

from __future__ import annotations

import errno
import json
import platform
import re
from pathlib import Path

import pytest
from attack_programs import RAW, main
from sandbox_as_nobody import run_programs_as_nobody
from sandbox_support import require_os_sandbox

from trompe_agents.sevex import sandbox_filter, sandbox_syscalls
from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits
from trompe_agents.sevex.sandbox_listener import STOP_AFTER

LIMITS = SandboxLimits(wall_seconds=20, cpu_seconds=10, memory_bytes=512 * 1024 * 1024)
API = {"crop": ["image", "box"]}
CALL = RAW + '''
import json, sandbox_syscalls
NUMBERS = sandbox_syscalls.ARCHES["$machine"][1]  # (uname is off the list)


def call(name, *args):
    return syscall(NUMBERS[name], *args)
''' + main("print(json.dumps(call($call)))\nreturn 'made'")
# each call of the attacks found so far (issue 42) and a few of each class: name, then its arguments
ATTACKS = {
    "listmount": '"listmount", None, None, 16, 0',  # every mount's host path
    "statmount": '"statmount", None, None, 4096, 0',
    "pidfd_open": '"pidfd_open", 1, 0',  # then pidfd_getfd: bubblewrap's init's descriptors
    "pidfd_getfd": '"pidfd_getfd", 0, 3, 0',
    "prlimit64": '"prlimit64", 1, 0, 0, None',  # pid 1's limits
    "kcmp": '"kcmp", 1, 2, 0, 0, 0',
    "move_pages": '"move_pages", 1, 0, 0, 0, 0, 0',
    "process_vm_readv": '"process_vm_readv", 1, None, 1, None, 1, 0',
    "socket": '"socket", 40, 1, 0',  # AF_VSOCK
    "socketpair": '"socketpair", 1, 1, 0, None',  # AF_UNIX: datagrams queue kernel memory
    "io_setup": '"io_setup", 65536, None',  # the machine's AIO events
    "inotify_init1": '"inotify_init1", 0',
    "fanotify_init": '"fanotify_init", 0, 0',
    "sync": '"sync"',
    "syncfs": '"syncfs", 0',
    "flock": '"flock", 0, 2',  # LOCK_EX on a file bound in from the host
    "prctl": '"prctl", 59, 1, 0, 0, 0',  # PR_SET_SYSCALL_USER_DISPATCH
    "setrlimit": '"setrlimit", 0, None',
    "kill": '"kill", 1, 9',
    "clone": '"clone", 17, 0, 0, 0, 0',  # a fork
    "ioctl": '"ioctl", 0, 0x5412, None',  # TIOCSTI: only TCGETS is on the list
    "mmap": '"mmap", 0, 4096, 5, 0x22, -1, 0',  # PROT_EXEC
    "sendmsg": '"sendmsg", 1, None, 0',  # on any fd but the child's own hand-over socket
    "exit_group": '"exit_group", 159',  # read as 128 + SIGSYS
}


def program(arguments: str) -> str:
    return CALL.replace("$call", arguments).replace("$machine", platform.machine())


def machine_numbers() -> dict[str, int]:
    return sandbox_syscalls.ARCHES[platform.machine()][1]


@pytest.mark.parametrize("name", sorted(ATTACKS))
async def test_a_call_off_the_list_never_runs_and_is_recorded(name):
    async with Sandbox(LIMITS, isolation=require_os_sandbox()) as box:
        result = await box.run(program(ATTACKS[name]), "", ["original"], "", API, {})
    assert result.kind == "forbidden" and result.answer is None, result
    assert re.search(rf"\b{name}\(", result.error), result.error
    if name != "exit_group":  # whose refusal ends the program (glibc's abort instruction)
        assert json.loads(result.log) == [-1, errno.EPERM], result.log


async def test_clone3_says_enosys_so_glibc_falls_back_to_clone_whose_flags_the_filter_reads():
    async with Sandbox(LIMITS, isolation=require_os_sandbox()) as box:
        result = await box.run(program('"clone3", None, 88'), "", ["original"], "", API, {})
    assert (result.kind, result.answer, json.loads(result.log)) == (None, "made", [-1, errno.ENOSYS]), result


async def test_every_call_off_the_list_is_refused_and_each_is_recorded():
    """Every call the kernel has (and, on x86_64, one by its x32 number), with zero arguments: the list is the
    only way through; each refusal is one record. (Unassigned numbers are left out: on some kernels, this
    test machine's among them, they end the caller with SIGILL before any filter runs.) A sandbox is stopped
    at its STOP_AFTER-th refusal, so each program tries one call fewer; the memory probe is answered EPERM
    without a record (test_sandbox_endings.py has what it is for)."""
    numbers = machine_numbers()
    answered = (*sandbox_syscalls.ALLOWED, *sandbox_syscalls.FALLBACK, sandbox_syscalls.MEMORY_PROBE)
    tried = sorted(set(numbers.values()) - {numbers[name] for name in answered})
    if platform.machine() == "x86_64":
        tried.append(0x40000000 | numbers["getpid"])
    chunks = [tried[at:at + STOP_AFTER - 1] for at in range(0, len(tried), STOP_AFTER - 1)]
    sweeps = [RAW + f"\nimport json\nTRIED = {chunk}\n" + main('''
through = {}
for number in TRIED:
    result = syscall(number, 0, 0, 0, 0, 0, 0)
    if result != [-1, 1]:
        through[number] = result
print(json.dumps(through))
return "swept"''') for chunk in chunks]
    probe = RAW + main(f"print(json.dumps(syscall({numbers[sandbox_syscalls.MEMORY_PROBE]})))\nreturn 'probed'")
    async with Sandbox(LIMITS, warm=1, isolation=require_os_sandbox()) as box:
        results = [await box.run(sweep, "", [], "", API, {}) for sweep in sweeps]
        probed = await box.run("import json\n" + probe, "", [], "", API, {})
    for chunk, result in zip(chunks, results, strict=True):
        assert result.kind == "forbidden" and result.log and json.loads(result.log) == {}, (result.error, result.log)
        assert f"({len(chunk)} in all)" in result.error or len(chunk) <= 4, result.error
    assert (probed.kind, probed.answer, json.loads(probed.log)) == (None, "probed", [-1, errno.EPERM]), probed


def test_as_an_unprivileged_user_too():
    """Run as root, the attacks again from a process of user `nobody`."""
    results = run_programs_as_nobody([program(arguments) for arguments in ATTACKS.values()], LIMITS)
    for name, result in zip(ATTACKS, results, strict=True):
        assert result["kind"] == "forbidden" and re.search(rf"\b{name}\(", result["error"]), (name, result)


HEADERS = {"x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
           "aarch64": Path("/usr/include/asm-generic/unistd.h")}


@pytest.mark.parametrize("machine", sorted(sandbox_syscalls.ARCHES))
def test_each_table_matches_the_kernel_headers(machine):
    """The numbers are the kernel's (asm-generic names fstatat newfstatat on 64-bit architectures)."""
    header = HEADERS[machine]
    if not header.exists():
        pytest.skip(f"{header} is not installed (Debian: linux-libc-dev)")
    found = {("newfstatat" if name == "fstatat" else name): int(number)
             for _, name, number in re.findall(r"#define __NR(3264)?_(\w+)\s+(\d+)\s*$", header.read_text(), re.M)}
    table = sandbox_syscalls.ARCHES[machine][1]
    assert {name: table[name] for name in found if name in table} == {n: v for n, v in found.items() if n in table}
    assert set(sandbox_syscalls.ALLOWED) | set(sandbox_syscalls.FALLBACK) <= set(found)


@pytest.mark.parametrize("machine", sorted(sandbox_syscalls.ARCHES))
def test_the_filter_fits_classic_bpf_on_each_architecture(machine):
    """Every allowed call is numbered there, and the program fits classic BPF's one-byte jumps and 4096 ops."""
    program = sandbox_filter.allow_list(machine, 3)
    assert len(program) % 8 == 0 and len(program) // 8 < 256
