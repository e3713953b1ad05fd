"""A seccomp filter for the sandboxed program: no new processes or threads, no namespaces, mounts, ptrace,
bpf, keyrings, io_uring or module loading, and no memory outside its rlimits (memfds and SysV shared memory,
message queues and semaphores are not counted by RLIMIT_AS, and a SysV segment outlives its detach). A denied
call kills the process (SIGSYS), which the parent reports as "forbidden".

Blocking process creation bounds fork bombs whoever runs SEVEX: RLIMIT_NPROC counts per host user, and the
sandbox's host user (root's launcher drops to `nobody`) may be shared by several sandboxes.
"""

from __future__ import annotations

import os
import platform
import struct

DENIED = ("clone", "clone3", "fork", "vfork", "ptrace", "unshare", "setns", "mount", "umount2", "pivot_root",
          "chroot", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
          "io_uring_enter", "io_uring_register", "kexec_load", "init_module", "finit_module", "process_vm_readv",
          "process_vm_writev", "memfd_create", "memfd_secret", "shmget", "shmat", "msgget", "semget")
# AUDIT_ARCH value and syscall numbers (from the kernel's unistd_64.h and asm-generic/unistd.h)
ARCHES = {
    "x86_64": (0xC000003E, {"clone": 56, "clone3": 435, "fork": 57, "vfork": 58, "ptrace": 101, "unshare": 272,
                            "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
                            "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
                            "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
                            "io_uring_register": 427, "kexec_load": 246, "init_module": 175, "finit_module": 313,
                            "process_vm_readv": 310, "process_vm_writev": 311, "memfd_create": 319,
                            "memfd_secret": 447, "shmget": 29, "shmat": 30, "msgget": 68, "semget": 64}),
    "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435, "ptrace": 117, "unshare": 97, "setns": 268, "mount": 40,
                             "umount2": 39, "pivot_root": 41, "chroot": 51, "keyctl": 219, "add_key": 217,
                             "request_key": 218, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
                             "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
                             "kexec_load": 104, "init_module": 105, "finit_module": 273, "process_vm_readv": 270,
                             "process_vm_writev": 271, "memfd_create": 279, "memfd_secret": 447, "shmget": 194,
                             "shmat": 196, "msgget": 186, "semget": 190}),
}
X32_BIT = 0x40000000  # x86_64's x32 ABI numbers: refused wholesale
LOAD_ABS, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
KILL, ALLOW = 0x80000000, 0x7FFF0000  # SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ALLOW


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def deny_filter(machine: str | None = None) -> bytes | None:
    """The BPF program bubblewrap loads with --seccomp (None for an architecture not listed here)."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    checks = [numbers[name] for name in DENIED if name in numbers]
    n = len(checks)
    program = [_op(LOAD_ABS, 4), _op(JEQ, audit_arch, jt=1), _op(RET, KILL), _op(LOAD_ABS, 0)]
    if audit_arch == ARCHES["x86_64"][0]:
        program.append(_op(JGE, X32_BIT, jt=n + 1))
    # each check jumps over the remaining checks and the ALLOW to the KILL return
    program += [_op(JEQ, nr, jt=n - i) for i, nr in enumerate(checks)]
    program += [_op(RET, ALLOW), _op(RET, KILL)]
    return b"".join(program)


def filter_fd(program: bytes) -> int:
    """A pipe's read end holding `program` (bubblewrap reads it to the end); the caller closes it."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)
    finally:
        os.close(write_end)
    return read_end
