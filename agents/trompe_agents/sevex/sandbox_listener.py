"""The parent's side of the sandbox's filter: the listener the child hands over, and a record of every call the
filter stopped, which the kernel writes and the program cannot (sandbox_filter.py).

Each stopped call waits in the kernel until it is read here (SECCOMP_IOCTL_NOTIF_RECV) and answered EPERM
(SECCOMP_IOCTL_NOTIF_SEND), so the record of a call is kept before the program can go on, and before any
message it sends afterwards is read.
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
from dataclasses import dataclass

from .sandbox_syscalls import ARCHES

NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # _IOWR('!', 0 and 1, struct seccomp_notif and _resp)
NOTIF = struct.Struct("=QIIiIQ6Q")  # struct seccomp_notif: id, pid, flags, then seccomp_data: nr, arch, ip, args
RESPONSE = struct.Struct("=QqiI")  # struct seccomp_notif_resp: id, val, error, flags
LISTENER = "anon_inode:seccomp notify"  # what /proc/self/fd names a seccomp listener
KEPT, SHOWN = 16, 4  # refusals kept with their arguments (the rest are counted), and named in the summary
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


class FilterRecord:
    """The listener of one sandbox's filter and what it stopped."""

    def __init__(self, listener: int):
        self.listener = listener
        self.refusals: list[Refusal] = []
        self.count = 0
        asyncio.get_running_loop().add_reader(listener, self._read)

    @classmethod
    async def receive(cls, hand_over: socket.socket, timeout: float) -> FilterRecord | None:
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
            return cls(fds[0])
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
        call_id, _, _, number, arch, _, *args = NOTIF.unpack(buffer)
        self.count += 1
        if len(self.refusals) < KEPT:
            self.refusals.append(Refusal(_name(arch, number), tuple(args)))
        with contextlib.suppress(OSError):  # ENOENT: the caller is gone
            fcntl.ioctl(self.listener, NOTIF_SEND, RESPONSE.pack(call_id, 0, -errno.EPERM, 0))

    def summary(self) -> str:
        """The refusals in one line: the first of each of the first few calls, and how many there were."""
        first = {refusal.name: refusal for refusal in reversed(self.refusals)}
        shown = ", ".join(str(first[name]) for name in list(dict.fromkeys(r.name for r in self.refusals))[:SHOWN])
        more = f" ({self.count} in all)" if self.count > SHOWN else ""
        return f"the sandbox's filter refused system calls off its list: {shown}{more}"

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.listener)
        os.close(self.listener)
