"""The sandboxed program's seccomp filter: an allow-list whose every refusal the parent records.

The child (sandbox_child.py) installs it on itself once its rlimits are set and before its job arrives, with
SECCOMP_FILTER_FLAG_NEW_LISTENER, and hands the listener to the parent over a socket it then closes. A call
outside sandbox_syscalls.ALLOWED (or one of its ARG_RULES broken, or another architecture's ABI) stops in the
kernel until the parent, which holds the only copy of the listener, has read it and answered EPERM; the parent
keeps that record, and a record is what makes a run `forbidden` (sandbox_listener.py). The program cannot write
one (only the kernel does) nor reach the listener, and trying any other call is itself a record.
A mapping of sandbox_syscalls.CHECKED_BYTES or more goes to the parent the same way, to be checked against the
program's memory limit rather than refused (the `memory` ending's fact).

Standard library only: the child imports it inside the sandbox, where it uses `_ctypes` and `_socket` directly
(the `ctypes` and `socket` packages cost a sandbox start some 50 ms more, `socket` most of it).
"""

from __future__ import annotations

import _ctypes
import _socket
import errno
import os
import struct

try:
    from . import sandbox_syscalls as syscalls
except ImportError:  # in the sandbox: a top-level module beside this one
    import sandbox_syscalls as syscalls

LOAD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|{JEQ,JGE,JSET}|K, BPF_RET|K
ALLOW, NOTIFY = 0x7FFF0000, 0x7FC00000  # SECCOMP_RET_ALLOW, SECCOMP_RET_USER_NOTIF
ENOSYS = 0x00050000 | errno.ENOSYS  # SECCOMP_RET_ERRNO
NR, ARCH = 0, 4  # offsets in struct seccomp_data; args[i] at 16 + 8i, its low 32 bits first (little-endian)
X32_BIT = 0x40000000  # x86_64's x32 ABI numbers
PR_SET_NO_NEW_PRIVS, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 38, 1, 8
HANDOVER = b"seccomp listener"  # the one message on the hand-over socket


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
            if not 0 <= distance <= 255:
                raise ValueError(f"jump to {target} out of range ({distance})")
            return distance

        return b"".join(struct.pack("=HBBI", code, offset(i, jt), offset(i, jf), k)
                        for i, (code, k, jt, jf) in enumerate(self.code))


def allow_list(machine: str, listener_socket: int) -> bytes:
    """The BPF program for `machine` (KeyError for one not in sandbox_syscalls.ARCHES); `listener_socket` is
    the one fd `sendmsg` may name."""
    audit_arch, numbers = syscalls.ARCHES[machine]
    bpf = _Assembler()
    bpf.op(LOAD_ABS, ARCH)
    bpf.op(JEQ, audit_arch, jf="record")
    bpf.op(LOAD_ABS, NR)
    if machine == "x86_64":
        bpf.op(JGE, X32_BIT, jt="record")
    checked = {*syscalls.ARG_RULES, *syscalls.SIZE_ARGS}
    for name in syscalls.ALLOWED:
        bpf.op(JEQ, numbers[name], jt=name if name in checked else "allow")
    for name in syscalls.FALLBACK:
        bpf.op(JEQ, numbers[name], jt="enosys")
    bpf.op(RET, NOTIFY)
    for name in sorted(checked):
        bpf.label(name)
        passed = f"{name} size" if name in syscalls.SIZE_ARGS else "allow"
        if name in syscalls.ARG_RULES:
            index, rule, value = syscalls.ARG_RULES[name]
            bpf.op(LOAD_ABS, 16 + 8 * index)
            value = listener_socket if value == "listener" else value
            if rule == "below":  # a status's low byte: the parent reads 128 + N as death by signal N
                bpf.op(JSET, 0x80, jt="record", jf=passed)
            elif rule == "equals":
                bpf.op(JEQ, value, jt=passed, jf="record")
            else:  # "without": none of these bits
                bpf.op(JSET, value, jt="record", jf=passed)
        if name in syscalls.SIZE_ARGS:  # a length of CHECKED_BYTES or more goes to the parent, to be checked
            bpf.label(passed)
            bpf.op(LOAD_ABS, 16 + 8 * syscalls.SIZE_ARGS[name] + 4)  # the high 32 bits
            bpf.op(JEQ, 0, jf="record")
            bpf.op(LOAD_ABS, 16 + 8 * syscalls.SIZE_ARGS[name])
            bpf.op(JGE, syscalls.CHECKED_BYTES, jt="record", jf="allow")
    bpf.label("allow")
    bpf.op(RET, ALLOW)
    bpf.label("record")
    bpf.op(RET, NOTIFY)
    bpf.label("enosys")
    bpf.op(RET, ENOSYS)
    return bpf.assemble()


class _Long(_ctypes._SimpleCData):
    _type_ = "l"


class _Pointer(_ctypes._SimpleCData):  # char *: points into the bytes it is given, which it keeps alive
    _type_ = "z"


class _Syscall(_ctypes.CFuncPtr):
    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    _restype_ = _Long


def install(listener_socket: int) -> None:
    """Filter this process and hand the listener over `listener_socket`; keeps no copy of either. Everything
    after the filter is in place makes only calls on the list (sendmsg on that socket, close)."""
    machine = os.uname().machine
    numbers = syscalls.ARCHES[machine][1]
    bpf = allow_list(machine, listener_socket)
    code = _Pointer(bpf)
    address = struct.unpack("P", bytes(memoryview(code)))[0]  # where `code` points: bpf's bytes
    program = _Pointer(struct.pack("HxxxxxxP", len(bpf) // 8, address))  # struct sock_fprog
    syscall = _Syscall(_ctypes.dlsym(_ctypes.dlopen(None), "syscall"))
    hand_over = _socket.socket(fileno=listener_socket)
    if syscall(_Long(numbers["prctl"]), _Long(PR_SET_NO_NEW_PRIVS), _Long(1), _Long(0), _Long(0), _Long(0)) != 0:
        raise OSError(_ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    listener = syscall(_Long(numbers["seccomp"]), _Long(SECCOMP_SET_MODE_FILTER),
                       _Long(SECCOMP_FILTER_FLAG_NEW_LISTENER), program)
    if listener < 0:
        raise OSError(_ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER)")
    try:
        hand_over.sendmsg([HANDOVER], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("i", listener))])
    finally:
        hand_over.close()
        os.close(listener)
