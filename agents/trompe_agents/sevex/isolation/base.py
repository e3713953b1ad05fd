"""What every isolation mechanism provides: a command that starts the child under it, and whether it can."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from .cgroup import SandboxCgroup

SEVEX = Path(__file__).resolve().parents[1]
CHILD = SEVEX / "sandbox_child.py"
# all the child imports besides the standard library
CHILD_FILES = (CHILD, SEVEX / "sandbox_frames.py", SEVEX / "sandbox_filter.py", SEVEX / "sandbox_syscalls.py")


@dataclass(frozen=True)
class SandboxLimits:
    """Per-program limits; all but wall_seconds and the disk ones are rlimits the child sets on itself."""

    wall_seconds: float = 120.0  # whole program, tool and model calls included; then the whole tree is killed
    cpu_seconds: int = 30  # the program's own computation
    memory_bytes: int = 1024 * 1024 * 1024  # address space of the child
    # all memory of all the sandbox's processes, the kernel's for them and the work tmpfs included, where a
    # cgroup bounds it (cgroup.py): the child's address space, the tmpfs, and 192 MiB for the launcher,
    # bubblewrap and their kernel objects
    cgroup_memory_bytes: int = 1280 * 1024 * 1024
    max_calls: int = 64  # API calls one program may make
    file_bytes: int = 16 * 1024 * 1024  # largest file the program may write
    open_files: int = 64
    processes: int = 16  # RLIMIT_NPROC, where the sandbox has its own user namespace, and a cgroup's pids.max
    disk_bytes: int = 64 * 1024 * 1024  # size of the private tmpfs (bubblewrap)
    disk_files: int = 1024  # files and folders in that tmpfs (each costs kernel memory even when empty)

    def for_child(self, own_user: bool, listener: int | None = None) -> str:
        """The rlimits as the child's argument; RLIMIT_NPROC only where it counts the sandbox's own processes
        (outside a user namespace it would count every process of this user); `listener`: the socket over
        which the child hands the parent its seccomp filter's listener (None: no filter)."""
        return json.dumps({"cpu": self.cpu_seconds, "memory": self.memory_bytes, "file": self.file_bytes,
                           "files": self.open_files, "processes": self.processes if own_user else None,
                           "listener": listener})


class SandboxUnavailable(RuntimeError):
    """No OS sandbox can run here; the message says why and how to fix it."""


@dataclass
class Launch:
    """How to start one child: the command, and what the parent must clean up after it."""

    argv: list[str]
    cwd: str | None = None
    folder: Path | None = None  # a host folder to delete when the child ends (None: a tmpfs gone with the sandbox)
    pass_fds: tuple[int, ...] = field(default=())  # handed to the launcher, closed in the parent once it started
    # what ends the child's process group at once: SIGKILL, or SIGTERM where a launcher takes its sandbox down
    stop_signal: int = signal.SIGKILL
    # exit status 128 + N means the program died of signal N (bubblewrap's init reports a signal death so; its
    # seccomp filter refuses a program any exit status of 128 or more, so such a status is never the program's)
    signal_statuses: bool = False
    listener: socket.socket | None = None  # where the child's filter listener arrives (None: no filter)
    report: int | None = None  # read end of the launcher's report: the CPU seconds of the sandbox's processes
    cgroup: SandboxCgroup | None = None  # the sandbox's own cgroup, which its launcher joins (None: none here)

    def cleanup(self) -> None:
        """Delete what the child left: its folder, its cgroup (any process still in it killed first)."""
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        if self.listener is not None:
            self.listener.close()
        if self.report is not None:
            os.close(self.report)
            self.report = None


class Isolation(ABC):
    """One way to run the child; `unavailable()` is checked before any generated code runs (fail closed)."""

    name: ClassVar[str]
    own_user: ClassVar[bool]  # runs in its own user namespace, so RLIMIT_NPROC counts only the sandbox

    @abstractmethod
    def unavailable(self) -> str | None:
        """Why this mechanism cannot run here (None: it can)."""

    @abstractmethod
    def launch(self, limits: SandboxLimits) -> Launch:
        """The command that starts one waiting child under this mechanism."""

    def bounds(self, limits: SandboxLimits) -> str:
        """One line saying what bounds a program's use of the machine here, said once before programs run."""
        return f"the {self.name} sandbox says nothing of what it bounds"
