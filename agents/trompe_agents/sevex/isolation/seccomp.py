"""A seccomp filter for the sandboxed program: no new processes or threads, no namespaces, mounts, ptrace,
bpf, keyrings, io_uring or module loading, and no memory outside its rlimits (memfds and SysV shared memory,
message queues and semaphores are not counted by RLIMIT_AS, and a SysV segment outlives its detach). A denied
call kills the process (SIGSYS), which the parent reports as "forbidden".

The parent reads how a program ended from its exit status, which bubblewrap's init reports as a shell does
(128 + N for signal N), so the filter also keeps a program from forging one: an exit status of 128 or more
(os._exit(159) would read as SIGSYS), sending itself SIGSYS or SIGXCPU (kill, tgkill, sigqueue, pidfd), a
seccomp filter of its own (which could kill it with SIGSYS), and timers, queue notifications or F_SETSIG that
would have the kernel send either. Those calls fail with EPERM instead of killing, so trying is no ending
either: a refused exit falls through to glibc's abort instruction, a crash.

Blocking process creation bounds fork bombs whoever runs SEVEX: RLIMIT_NPROC counts per host user, and the
sandbox's host user (root's launcher drops to `nobody`) may be shared by several sandboxes.
"""

from __future__ import annotations

import errno
import os
import platform
import signal
import struct

DENIED = ("clone", "clone3", "fork", "vfork", "ptrace", "unshare", "setns", "mount", "umount2", "pivot_root",
          "chroot", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
          "io_uring_enter", "io_uring_register", "kexec_load", "init_module", "finit_module", "process_vm_readv",
          "process_vm_writev", "memfd_create", "memfd_secret", "shmget", "shmat", "msgget", "semget")
REFUSED = ("seccomp", "timer_create", "mq_notify")  # EPERM: each could make the kernel send SIGSYS or SIGXCPU
EXITS = ("exit", "exit_group")  # a status whose low byte is 128 or more is refused
SIGNAL_ARG = {"kill": 1, "tkill": 1, "tgkill": 2, "rt_sigqueueinfo": 1, "rt_tgsigqueueinfo": 2,
              "pidfd_send_signal": 1}  # which argument is the signal: SIGSYS and SIGXCPU are refused
FORGED = (signal.SIGSYS, signal.SIGXCPU)  # what the parent reads as this filter's kill and as the CPU limit
PR_SET_SECCOMP, F_SETSIG = 22, 10
ARG_EQUALS = {"prctl": (0, PR_SET_SECCOMP), "fcntl": (1, F_SETSIG)}  # refused when that argument is that value
# AUDIT_ARCH value and syscall numbers (from the kernel's unistd_64.h and asm-generic/unistd.h)
ARCHES = {
    "x86_64": (0xC000003E, {"clone": 56, "clone3": 435, "fork": 57, "vfork": 58, "ptrace": 101, "unshare": 272,
                            "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
                            "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
                            "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
                            "io_uring_register": 427, "kexec_load": 246, "init_module": 175, "finit_module": 313,
                            "process_vm_readv": 310, "process_vm_writev": 311, "memfd_create": 319,
                            "memfd_secret": 447, "shmget": 29, "shmat": 30, "msgget": 68, "semget": 64,
                            "seccomp": 317, "timer_create": 222, "mq_notify": 244, "exit": 60, "exit_group": 231,
                            "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
                            "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424, "prctl": 157, "fcntl": 72}),
    "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435, "ptrace": 117, "unshare": 97, "setns": 268, "mount": 40,
                             "umount2": 39, "pivot_root": 41, "chroot": 51, "keyctl": 219, "add_key": 217,
                             "request_key": 218, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
                             "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
                             "kexec_load": 104, "init_module": 105, "finit_module": 273, "process_vm_readv": 270,
                             "process_vm_writev": 271, "memfd_create": 279, "memfd_secret": 447, "shmget": 194,
                             "shmat": 196, "msgget": 186, "semget": 190, "seccomp": 277, "timer_create": 107,
                             "mq_notify": 184, "exit": 93, "exit_group": 94, "kill": 129, "tkill": 130,
                             "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240,
                             "pidfd_send_signal": 424, "prctl": 167, "fcntl": 25}),
}
X32_BIT = 0x40000000  # x86_64's x32 ABI numbers: refused wholesale
LOAD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|{JEQ,JGE,JSET}|K, BPF_RET|K
KILL, ALLOW = 0x80000000, 0x7FFF0000  # SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ALLOW
ERRNO = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO
NR, ARCH = 0, 4  # offsets in struct seccomp_data; args[i] at 16 + 8i, its low 32 bits first (little-endian)


def _arg(i: int) -> int:
    return 16 + 8 * i


class _Assembler:
    """Classic BPF with named forward jumps (each offset must fit a byte)."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int, str | None, str | None]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int, jt: str | None = None, jf: str | None = None) -> None:
        self.code.append((code, k, jt, jf))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        def offset(at: int, target: str | None) -> int:
            if target is None:
                return 0
            distance = self.labels[target] - at - 1
            assert 0 <= distance <= 255, (target, distance)
            return distance

        return b"".join(struct.pack("=HBBI", code, offset(i, jt), offset(i, jf), k)
                        for i, (code, k, jt, jf) in enumerate(self.code))


def deny_filter(machine: str | None = None) -> bytes | None:
    """The BPF program bubblewrap loads with --seccomp (None for an architecture not listed here)."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    bpf = _Assembler()
    bpf.op(LOAD_ABS, ARCH)
    bpf.op(JEQ, audit_arch, jf="kill")
    bpf.op(LOAD_ABS, NR)
    if audit_arch == ARCHES["x86_64"][0]:
        bpf.op(JGE, X32_BIT, jt="kill")
    rules = {name: "exit" for name in EXITS} | {name: f"signal{i}" for name, i in SIGNAL_ARG.items()}
    rules |= {name: name for name in ARG_EQUALS}
    for name in DENIED:
        if name in numbers:
            bpf.op(JEQ, numbers[name], jt="kill")
    for name in REFUSED:
        bpf.op(JEQ, numbers[name], jt="refuse")
    for name, rule in rules.items():
        bpf.op(JEQ, numbers[name], jt=rule)
    bpf.op(RET, ALLOW)
    bpf.label("exit")
    bpf.op(LOAD_ABS, _arg(0))
    bpf.op(JSET, 0x80, jt="refuse", jf="allow")
    for i in sorted(set(SIGNAL_ARG.values())):
        bpf.label(f"signal{i}")
        bpf.op(LOAD_ABS, _arg(i))
        for forged in FORGED:
            bpf.op(JEQ, forged, jt="refuse")
        bpf.op(RET, ALLOW)
    for name, (i, value) in ARG_EQUALS.items():
        bpf.label(name)
        bpf.op(LOAD_ABS, _arg(i))
        bpf.op(JEQ, value, jt="refuse", jf="allow")
    bpf.label("allow")
    bpf.op(RET, ALLOW)
    bpf.label("refuse")
    bpf.op(RET, ERRNO)
    bpf.label("kill")
    bpf.op(RET, KILL)
    return bpf.assemble()


def filter_fd(program: bytes) -> int:
    """A pipe's read end holding `program` (bubblewrap reads it to the end); the caller closes it."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)
    finally:
        os.close(write_end)
    return read_end
