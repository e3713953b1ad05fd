"""bubblewrap: the security boundary for generated code on Linux.

The child runs as an unprivileged uid in new user, pid, net, ipc, uts and cgroup namespaces with an empty
environment; it sees only the interpreter, its standard library and the shared libraries they load (all
read-only) and a minimal read-only /dev, and no /proc at all (so neither host sysctls nor the sandbox's init
are within reach); its only writable place is a private tmpfs capped in bytes and files. Started by root,
the launcher (launcher.py) first drops to an unprivileged host uid, so the program is never host uid 0. The
child puts itself under an allow-list seccomp filter before its job arrives and hands the parent the filter's
listener over a socket passed in (sandbox_filter.py); the launcher reports the CPU time the sandbox's
processes used on a pipe of its own. Where SEVEX can make one, each sandbox has a cgroup of its own
(cgroup.py) bounding the memory (kernel memory included) and number of its processes, which the launcher
joins first. `--die-with-parent` ends it with SEVEX, and bubblewrap runs below a
pid 1 of the launcher's own pid namespace, so whatever ends the launcher, that pid 1 or bubblewrap (a
wall-clock kill, SEVEX's death, the OOM killer) takes the whole process tree, at any moment of its start.
"""

from __future__ import annotations

import functools
import marshal
import os
import platform
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

from .. import sandbox_syscalls
from . import cgroup
from .base import CHILD_FILES, Isolation, Launch, SandboxLimits, SandboxUnavailable

UID = 65534  # "nobody" inside the user namespace
LAUNCHER = Path(__file__).with_name("launcher.py")
STAGE = "/tmp"  # covered, in the launcher's mount namespace only, by the tmpfs holding the work folder and binds
CODE_DIR = "/sandbox"  # the child's own two files, read-only
WORK_DIR = "/work"  # the private tmpfs: the program's working directory and only writable place
# extension modules for computation whose shared libraries are bound; the others (ssl, sqlite, ctypes, tkinter,
# curses...) stay unloadable: each library is one less thing to attack, and one less mount per start
COMPUTE_MODULES = {"math", "cmath", "_json", "_random", "_bisect", "_statistics", "_struct", "_datetime",
                   "_decimal", "_heapq", "array", "binascii", "unicodedata", "zlib", "_sha512", "_sha256",
                   "_sha2", "_md5", "_blake2", "_contextvars", "_opcode",
                   "_ctypes", "_socket"}  # the last two: the child installing its filter and handing it over


@functools.cache
def interpreter() -> str:
    """The real interpreter binary (a virtual environment's python is a symlink to it)."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _library_paths(files: list[str]) -> set[str]:
    """The shared libraries `files` load, as the dynamic loader resolves them (from one `ldd` run)."""
    out = subprocess.run(["ldd", *files], capture_output=True, text=True, check=False, env={}).stdout
    paths = set()
    for line in out.splitlines():
        target = line.split("=>", 1)[-1].strip()
        path = target.split(" (", 1)[0].strip()
        if path.startswith("/") and not path.endswith(":"):
            paths.add(path)
    return paths


def _at_real_folder(path: str) -> str:
    """`path` with its folder's symlinks resolved (/lib/x/libc.so.6 -> /usr/lib/x/libc.so.6), name kept."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


@functools.cache
def _view() -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The read-only part of the sandbox's file system: (source, destination) binds and symlink arguments."""
    stdlib = os.path.realpath(sysconfig.get_path("stdlib"))
    dynload = os.path.realpath(sysconfig.get_config_var("DESTSHARED") or stdlib)
    binds = {interpreter(): interpreter(), stdlib: stdlib, dynload: dynload}  # where seen -> what is shown
    modules = [str(p) for p in Path(dynload).glob("*.so") if p.name.split(".")[0] in COMPUTE_MODULES]
    for path in _library_paths([interpreter(), *modules]):
        binds[_at_real_folder(path)] = os.path.realpath(path)
    pairs = [(source, dest) for dest, source in sorted(binds.items())
             if dest == stdlib or not dest.startswith(stdlib + os.sep)]
    pairs += [(str(path), f"{CODE_DIR}/{path.name}") for path in CHILD_FILES]
    # top-level links such as /lib -> usr/lib, so the loader's default paths reach the bound libraries
    links: list[str] = []
    for name in sorted(os.listdir("/")):
        link = f"/{name}"
        if os.path.islink(link) and any(d.startswith(os.path.realpath(link) + os.sep) for d in binds):
            links += ["--symlink", os.readlink(link), link]
    return tuple(pairs), tuple(links)


def host_user() -> tuple[int, int]:
    """The unprivileged host uid and gid a root caller's sandboxes run as: $TROMPE_SANDBOX_USER (a name or
    uid), else `nobody`, else 65534."""
    wanted = os.environ.get("TROMPE_SANDBOX_USER", "nobody")
    try:
        entry = pwd.getpwuid(int(wanted)) if wanted.isdigit() else pwd.getpwnam(wanted)
    except KeyError:
        if wanted != "nobody":
            raise SandboxUnavailable(f"TROMPE_SANDBOX_USER={wanted!r} is not a user on this machine") from None
        return UID, UID
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise SandboxUnavailable(f"TROMPE_SANDBOX_USER={wanted!r} is root; name an unprivileged user")
    return entry.pw_uid, entry.pw_gid


class Bwrap(Isolation):
    name = "bwrap"
    own_user = True

    def __init__(self, executable: str | None = None):
        self.executable = executable or shutil.which("bwrap")

    def command(self, limits: SandboxLimits, program: list[str], fds: tuple[int, ...] = ()) -> Launch:
        """bubblewrap running `program` (arguments after the interpreter) with `fds` open, started through the
        launcher, which reports on a pipe of its own."""
        newer = _options(self.executable)  # used where this bubblewrap has them
        pairs, links = _view()
        root = os.geteuid() == 0
        folder = Path(STAGE)
        user = host_user() if root else (0, 0)
        where = cgroup.layout()
        group = None if isinstance(where, str) else \
            cgroup.SandboxCgroup.make(where, limits.cgroup_memory_bytes, limits.processes)
        report, report_end = os.pipe()
        plan = {"stage": str(folder), "binds": [source for source, _ in pairs], "user": user, "owner": user,
                "bytes": limits.disk_bytes, "files": limits.disk_files, "report": report_end,
                "cgroups": group.joins if group else []}
        view = [arg for i, (_, dest) in enumerate(pairs) for arg in ("--ro-bind", f"{folder}/{i}", dest)]
        argv = [self.executable, "--unshare-all", "--unshare-user", "--uid", str(UID), "--gid", str(UID),
                *(["--disable-userns"] if "--disable-userns" in newer else []), "--die-with-parent",
                "--new-session", "--clearenv", "--cap-drop", "ALL", "--hostname", "sevex", *view, *links,
                "--dev", "/dev", "--remount-ro", "/dev", "--bind", f"{folder}/work", WORK_DIR,
                "--chdir", WORK_DIR, "--remount-ro", "/"]
        launcher = [interpreter(), "-I", "-S", str(LAUNCHER), marshal.dumps(plan).hex(), str(os.getpid()), "--"]
        return Launch([*launcher, *argv, "--", interpreter(), "-I", "-S", *program], pass_fds=(report_end, *fds),
                      signal_statuses=True, stop_signal=signal.SIGTERM, report=report, cgroup=group)

    def launch(self, limits: SandboxLimits) -> Launch:
        """The child, with the socket over which it hands over its filter's listener."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        child = theirs.detach()
        launch = self.command(limits, [f"{CODE_DIR}/{CHILD_FILES[0].name}", WORK_DIR,
                                       limits.for_child(True, child)], (child,))
        launch.listener = ours
        return launch

    def unavailable(self) -> str | None:
        return _probe(self.executable)

    def bounds(self, limits: SandboxLimits) -> str:
        """What bounds a program here: a cgroup per sandbox where one can be made (said why not where none can),
        and what holds either way."""
        where = cgroup.layout()
        memory = f"RLIMIT_AS ({limits.memory_bytes // 2**20:,} MiB)"
        if isinstance(where, str):
            head = f"no cgroup ({where}), so no bound on the sandbox's kernel memory but the filter's"
        else:
            head = where.describe(limits.cgroup_memory_bytes, limits.processes)
            memory = f"the cgroup and {memory}"
        return (f"sandbox bounds ({head}): memory by {memory} and the work tmpfs ({limits.disk_bytes // 2**20:,} "
                f"MiB, {limits.disk_files:,} files), CPU by RLIMIT_CPU ({limits.cpu_seconds} s), kernel objects by "
                "the filter, which refuses every call that makes processes, threads, sockets, pipes, AIO contexts, "
                "inotify or fanotify instances, locks or syncs")


@functools.cache
def _options(executable: str) -> frozenset[str]:
    """Which of the newer options this bubblewrap knows (older releases lack them: their tmpfs is then capped
    only per file, by RLIMIT_FSIZE, and nested user namespaces are stopped by the seccomp filter alone)."""
    try:
        text = subprocess.run([executable, "--help"], capture_output=True, text=True, check=False, env={}).stdout
    except OSError:
        return frozenset()
    return frozenset(option for option in ("--size", "--disable-userns") if option in text)


@functools.cache
def _probe(executable: str | None) -> str | None:
    """Start one real sandbox (user namespaces may be disabled, bwrap may not be setuid where it must be)."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap needs Linux (this is {sys.platform})"
    if executable is None:
        return "bubblewrap (bwrap) is not installed"
    if shutil.which("ldd") is None:
        return "ldd is missing, so the libraries the interpreter needs cannot be found"
    if platform.machine() not in sandbox_syscalls.ARCHES:
        return (f"no system-call allow-list for {platform.machine()} (there are lists for "
                f"{', '.join(sandbox_syscalls.ARCHES)})")
    launch = Bwrap(executable).launch(SandboxLimits())
    try:
        with subprocess.Popen(launch.argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env={}, pass_fds=launch.pass_fds) as started:
            for fd in launch.pass_fds:
                os.close(fd)
            launch.listener.settimeout(60)
            try:
                _, fds, _, _ = socket.recv_fds(launch.listener, 64, 1)
            except OSError:  # a sandbox that hangs: not waited for
                started.kill()
                raise
            for fd in fds:
                os.close(fd)
            started.stdin.close()  # the child ends without a job
            error = started.stderr.read().decode(errors="replace")
    except OSError as exc:  # TimeoutError included
        return f"bubblewrap could not start: {exc}"
    finally:
        launch.cleanup()
    if len(fds) != 1:
        lines = error.strip().splitlines() or [f"exit status {started.returncode}"]
        return f"bubblewrap could not start a sandbox ({lines[-1].strip()})"
    return None
