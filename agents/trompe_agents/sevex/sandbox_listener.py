"""The parent's side of the sandbox's filter: the listener the child hands over, and a record of every call the
filter stopped, which the kernel writes and the program cannot (sandbox_filter.py).

Each stopped call waits in the kernel until it is read here (SECCOMP_IOCTL_NOTIF_RECV) and answered EPERM
(SECCOMP_IOCTL_NOTIF_SEND), so the record of a call is kept before the program can go on, and before any
message it sends afterwards is read. One refusal already makes the run `forbidden`, so after STOP_AFTER of them
the sandbox is stopped: what a program looping refused calls costs this process is bounded, not its CPU limit.

Two kinds of call come here to be answered rather than refused (sandbox_syscalls.py): a mapping of CHECKED_BYTES
or more, which goes on (SECCOMP_USER_NOTIF_FLAG_CONTINUE) unless, with what the caller has mapped already
(/proc/PID/status VmSize, read while it waits), it would take the program over its address-space limit, which is then
answered ENOMEM here and kept as a fact; and the child's memory probe, for which the caller's peak address space
(/proc/PID/status VmPeak) is read. Those facts, never the program's word, make a run end as `memory`; at most
CHECKS of them are answered before the sandbox is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import select
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass

from .sandbox_syscalls import ARCHES, CHECKED_BYTES, MEMORY_PROBE, PROT_EXEC, SIZE_ARGS

NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # _IOWR('!', 0 and 1, struct seccomp_notif and _resp)
NOTIF = struct.Struct("=QIIiIQ6Q")  # struct seccomp_notif: id, pid, flags, then seccomp_data: nr, arch, ip, args
RESPONSE = struct.Struct("=QqiI")  # struct seccomp_notif_resp: id, val, error, flags
LISTENER = "anon_inode:seccomp notify"  # what /proc/self/fd names a seccomp listener
KEPT, SHOWN = 16, 4  # refusals kept with their arguments (the rest are counted), and named in the summary
STOP_AFTER = 16  # refusals answered before the sandbox is stopped (more would only cost us, not change its ending)
CHECKS = 4096  # mappings checked and memory probes answered before the sandbox is stopped
CONTINUE = 1  # SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel makes the call as if the filter had allowed it
NAMES = {arch: {number: name for name, number in table.items()} for arch, table in ARCHES.values()}


@dataclass(frozen=True)
class Refusal:
    """One call the filter stopped, as the kernel described it."""

    name: str
    args: tuple[int, ...]

    def __str__(self) -> str:
        """The name and its first three arguments (how many it takes is not recorded)."""
        return f"{self.name}({', '.join(hex(a) if a > 4096 else str(a) for a in self.args[:3])}, ...)"


def _name(arch: int, number: int) -> str:
    known = NAMES.get(arch)
    if known is None:
        return f"system call {number} of another architecture ({arch:#x})"
    return known.get(number, f"system call {number}")


def _mapped_bytes(pid: int, field: str) -> int | None:
    """The caller's address space now ("VmSize") or at its peak ("VmPeak"), from /proc/PID/status (None: gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith(f"{field}:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None


class FilterRecord:
    """The listener of one sandbox's filter, what it stopped and what it saw of the program's memory; `stop`
    ends the sandbox once it has refused STOP_AFTER calls or answered CHECKS checks."""

    def __init__(self, listener: int, memory_bytes: int, stop: Callable[[], None]):
        self.listener = listener
        self.memory_bytes = memory_bytes
        self.stop = stop
        self.refusals: list[Refusal] = []
        self.count = 0
        self.checks = 0
        self.memory: str | None = None  # the fact that the program reached its memory limit, in words
        self.stopped: str | None = None  # why this record stopped the sandbox
        asyncio.get_running_loop().add_reader(listener, self._read)

    @classmethod
    async def receive(cls, hand_over: socket.socket, timeout: float, memory_bytes: int,
                      stop: Callable[[], None]) -> FilterRecord | None:
        """The listener the child sends over `hand_over` (None: it sent none, or something else, in time)."""
        loop = asyncio.get_running_loop()
        hand_over.setblocking(False)
        arrived: asyncio.Future[list[int]] = loop.create_future()

        def ready() -> None:
            try:
                _, fds, _, _ = socket.recv_fds(hand_over, 64, 1)
            except BlockingIOError:
                return
            except OSError:
                fds = []
            if not arrived.done():
                arrived.set_result(fds)

        loop.add_reader(hand_over.fileno(), ready)
        try:
            async with asyncio.timeout(timeout):  # not wait_for, which on 3.11 drops a cancel that meets the arrival
                fds = await arrived
        except TimeoutError:
            return None
        finally:
            loop.remove_reader(hand_over.fileno())
        if len(fds) == 1 and os.readlink(f"/proc/self/fd/{fds[0]}") == LISTENER:
            return cls(fds[0], memory_bytes, stop)
        for fd in fds:
            os.close(fd)
        return None

    def _read(self) -> None:
        """Record and refuse the waiting call; polled first, as NOTIF_RECV blocks when none waits (after the
        program has ended the listener only hangs up)."""
        poller = select.poll()
        poller.register(self.listener, select.POLLIN)
        events = poller.poll(0)
        if not events or not events[0][1] & select.POLLIN:
            if events:  # hung up: every process under the filter has ended
                asyncio.get_running_loop().remove_reader(self.listener)
            return
        buffer = bytearray(NOTIF.size)
        try:
            fcntl.ioctl(self.listener, NOTIF_RECV, buffer)
        except OSError as exc:  # ENOENT: the caller was killed meanwhile
            if exc.errno in (errno.ENOENT, errno.EINTR):
                return
            raise
        call_id, pid, _, number, arch, _, *args = NOTIF.unpack(buffer)
        name = _name(arch, number)
        checked = (name in SIZE_ARGS and not (name == "mmap" and args[2] & PROT_EXEC)) or name == MEMORY_PROBE
        answer = self._check(name, pid, args) if checked else (-errno.EPERM, 0)
        if not checked:
            self.count += 1
            if len(self.refusals) < KEPT:
                self.refusals.append(Refusal(name, tuple(args)))
        with contextlib.suppress(OSError):  # ENOENT: the caller is gone
            fcntl.ioctl(self.listener, NOTIF_SEND, RESPONSE.pack(call_id, 0, *answer))
        self.checks += 1 if checked else 0
        if self.stopped is None and (self.count >= STOP_AFTER or self.checks >= CHECKS):
            self.stopped = (f"{self.count} refused calls" if self.count >= STOP_AFTER else
                            f"the program mapped {CHECKED_BYTES // 2**20} MiB or more at once, or probed its "
                            f"memory, {self.checks:,} times (each is checked by SEVEX)")
            asyncio.get_running_loop().remove_reader(self.listener)
            self.stop()

    def _check(self, name: str, pid: int, args: list[int]) -> tuple[int, int]:
        """(error, flags) for a checked call: a mapping that would take the caller over its limit is refused
        ENOMEM and kept as a fact, any other goes on; a probe keeps the caller's peak as a fact if it is within
        CHECKED_BYTES of the limit (only a mapping smaller than that can have failed unseen)."""
        if name == MEMORY_PROBE:
            peak = _mapped_bytes(pid, "VmPeak")
            if peak is not None and peak > self.memory_bytes - CHECKED_BYTES and self.memory is None:
                self.memory = (f"the program's address space reached {peak // 2**20:,} MiB of its "
                               f"{self.memory_bytes // 2**20:,} MiB limit "
                               f"(its peak, VmPeak)")
            return -errno.EPERM, 0  # answered, not made: the caller learns nothing
        size = args[SIZE_ARGS[name]] - (args[1] if name == "mremap" else 0)  # mremap: what it grows by
        mapped = _mapped_bytes(pid, "VmSize")
        if mapped is None or mapped + size <= self.memory_bytes:
            return 0, CONTINUE
        if self.memory is None:
            self.memory = (f"the program asked for {size // 2**20:,} MiB more with {mapped // 2**20:,} MiB mapped, "
                           f"over its {self.memory_bytes // 2**20:,} MiB limit ({name} refused ENOMEM)")
        return -errno.ENOMEM, 0

    def summary(self) -> str:
        """The refusals in one line: the first of each of the first few calls, and how many there were."""
        first = {refusal.name: refusal for refusal in reversed(self.refusals)}
        shown = ", ".join(str(first[name]) for name in list(dict.fromkeys(r.name for r in self.refusals))[:SHOWN])
        more = f" ({self.count} in all)" if self.count > SHOWN else ""
        more += f", then stopped after {STOP_AFTER}" if self.count >= STOP_AFTER else ""
        return f"the sandbox's filter refused system calls off its list: {shown}{more}"

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.listener)
        os.close(self.listener)
