"""Starts bubblewrap for one sandbox: never as host root, with a work tmpfs whose bytes and files are capped.

Run by the host interpreter (`python -I -S launcher.py PLAN PARENT -- bwrap ...`), outside the sandbox and
before any generated code exists, so it is trusted; standard library only. It first joins the sandbox's
cgroup, where SEVEX made one (cgroup.py), so it and every process it starts are bounded and counted there. In
a mount namespace of its own
(and, when not root, a user namespace of its own, where it may mount) it covers the stage folder with a
tmpfs holding the work tmpfs, mounted with `size=` and `nr_inodes=` (bubblewrap's `--tmpfs` caps neither the
file count nor, before 0.9, the bytes), and a bind of every read-only source, opened before anything is
covered. Started by root it then drops to the plan's unprivileged host uid before bubblewrap creates its
user namespace (the staged binds stay reachable for that uid even when the interpreter lives under a 0700
home such as /root): the program's uid is that host uid, never uid 0, so host sysctls, device nodes and
root-owned files refuse it whatever the sandbox maps. Every mount lives only in this process's namespace,
so the host's mount table is never touched.

It then stays as the parent of a forked copy of itself, pid 1 of a pid namespace of the launcher's own, which
runs bubblewrap as its child and reaps every process that comes to it; the launcher exits with bubblewrap's
status, having written to the plan's report pipe (which bubblewrap never gets) the CPU seconds of that pid 1
and every process reaped below it: the program's own, counted by the kernel, which is what makes an ending a
CPU timeout. On SIGTERM (SEVEX's kill) it SIGKILLs that pid 1, reaps it and exits. However pid 1 ends (that
SIGKILL, the OOM killer, its parent-death signal when the launcher dies) the kernel kills every process of
the sandbox with it, and when bubblewrap ends pid 1 kills what is left. bubblewrap alone cannot promise that:
its sandbox init sets a parent-death signal only late in its setup, and until then a killed bubblewrap orphans
it, for good while it waits for a go-ahead that will never come. In that namespace bubblewrap sees a /proc of
it (it reads /proc/PID of its init), mounted in a mount namespace of its own.
"""

import _ctypes  # not the ctypes package: this file imports only what costs no Python code to load (see main)
import marshal
import os
import resource  # noqa: F401 -- os.wait4 imports it, by then as a user who may not read the interpreter's files
import select
import _signal as signal  # the signal module less its enums: enum would cost this start some 5 ms of CPU
import sys

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG = 1


class _Int(_ctypes._SimpleCData):
    _type_ = "i"


class _UnsignedLong(_ctypes._SimpleCData):
    _type_ = "L"


class _Function(_ctypes.CFuncPtr):  # a libc function returning int, errno kept for _ctypes.get_errno
    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    _restype_ = _Int


_LIBC = _ctypes.dlopen(None)  # the interpreter's own symbols, libc's among them


def libc(name: str, *args: object, what: str | None = None) -> None:
    """Call libc's `name` (ints, bytes, None as C int, char *, NULL); an OSError saying `what` if it fails."""
    if _Function(_ctypes.dlsym(_LIBC, name))(*args) != 0:
        error = _ctypes.get_errno()
        raise OSError(error, f"{what or name}: {os.strerror(error)}")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    libc("mount", _bytes(source), _bytes(target), _bytes(fstype), _UnsignedLong(flags), _bytes(data),
         what=f"mount {target}")


def die_with(parent: int) -> None:
    """SIGKILL this process when the parent dies, and exit now if it already has (the race PDEATHSIG has)."""
    libc("prctl", PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def become(user: tuple[int, int] | None) -> None:
    """The plan's unprivileged host uid and gid (None: stay as we are, the caller was not root)."""
    if user is not None:
        os.setgroups([])
        os.setresgid(user[1], user[1], user[1])
        os.setresuid(user[0], user[0], user[0])


def bubblewrap(program: int, argv: list[str], user: tuple[int, int] | None, alive: int) -> None:
    """In the forked child, pid 1 of our pid namespace: a /proc of that namespace, the unprivileged user, a
    parent-death signal (set after the change of uid, which clears it), then bubblewrap as its child."""
    libc("unshare", CLONE_NEWNS)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    become(user)
    libc("prctl", PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if select.select([alive], [], [], 0)[0]:  # the launcher died before the signal was set
        os._exit(1)
    os.close(alive)
    started = os.fork()
    if started == 0:
        os.execve(program, argv, {})
    os._exit(reap(started))


def reap(started: int) -> int:
    """As pid 1 of our namespace, bubblewrap's exit status as a shell reports it, once every process is reaped:
    bubblewrap may exit on its init's word before it has reaped that init, which then comes to us; reaping it
    (killed first, as bubblewrap's end must end the sandbox) is what puts the program's CPU time, which the
    init reaped, into what the launcher's wait4 counts."""
    status = 1
    while True:
        try:
            pid, wait_status = os.waitpid(-1, 0)
        except ChildProcessError:
            return status
        if pid == started:
            status = os.waitstatus_to_exitcode(wait_status) if os.WIFEXITED(wait_status) else \
                128 + os.WTERMSIG(wait_status)
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:  # nothing left
                pass


def supervise(program: int, argv: list[str], parent: int, user: tuple[int, int] | None, report: int) -> int:
    """Run bubblewrap as a child; its exit status as a shell reports it (128 + signal). On SIGTERM, SIGKILL
    it and reap it, which the kernel lets happen only once every process of its pid namespace is gone.

    SIGTERM and SIGCHLD stay blocked and are taken by sigwaitinfo, never by a handler: SEVEX signals the
    group more than once, and a second SIGTERM landing in a handler's cleanup once cut it short, so the
    launcher exited without reaping bubblewrap (which then died of its parent-death signal, unreaped)."""
    alive_read, alive_write = os.pipe()  # closed by the kernel when this process dies, or by stop()
    awaited = {signal.SIGTERM, signal.SIGCHLD}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, awaited)
    child = os.fork()
    if child == 0:
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)  # bubblewrap starts with the mask we were given
            os.close(alive_write)
            bubblewrap(program, argv, user, alive_read)
        except BaseException as exc:  # noqa: BLE001 -- said, and the child exits: never back into our code
            print(f"launcher: {exc}", file=sys.stderr)
        finally:
            os._exit(127)
    os.close(alive_read)
    bubblewrap_fd = os.pidfd_open(child)  # safe from pid reuse, even once reaped
    become(user)
    die_with(parent)  # a change of uid clears the parent-death signal; our death kills the child, and so all
    while signal.sigwaitinfo(awaited).si_signo == signal.SIGCHLD:
        reaped, status, usage = os.wait4(child, os.WNOHANG)
        if reaped:  # our child exits with bubblewrap's status, as reap() reports it, or dies of a signal
            os.write(report, repr(usage.ru_utime + usage.ru_stime).encode())  # CPU seconds, as Python writes a float
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    stop(child, bubblewrap_fd, alive_write)
    return 1


def stop(child: int, bubblewrap_fd: int, alive_write: int) -> None:
    """SIGKILL bubblewrap and reap it. For an instant after the fork it may still be root while we are not
    (EPERM): closing the pipe it checks after its own change of uid makes it exit by itself then."""
    os.close(alive_write)
    while True:
        try:
            signal.pidfd_send_signal(bubblewrap_fd, signal.SIGKILL)
        except (PermissionError, ProcessLookupError):  # ProcessLookupError: it has ended
            pass
        if select.select([bubblewrap_fd], [], [], 0.01)[0]:  # it has ended
            os.waitpid(child, 0)
            return


def own_namespaces(root: bool) -> None:
    """Private mount and pid namespaces (the pid one for our children); when not root, inside a user namespace
    mapping this uid to its root."""
    uid, gid = os.getuid(), os.getgid()
    libc("unshare", CLONE_NEWNS | CLONE_NEWPID | (0 if root else CLONE_NEWUSER))
    if not root:
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    mount(None, "/", None, MS_REC | MS_PRIVATE)


def stage(plan: dict, sources: list[int]) -> None:
    """The work tmpfs and every read-only source (open fds) at stage/N, in this namespace only."""
    folder = plan["stage"]
    mount("sevex-stage", folder, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096")
    for i, fd in enumerate(sources):
        source, target = f"/proc/self/fd/{fd}", f"{folder}/{i}"
        if os.path.isdir(source):
            os.mkdir(target)
        else:
            open(target, "wb").close()
        mount(source, target, None, MS_BIND | MS_REC)
        os.close(fd)
    work = f"{folder}/work"
    os.mkdir(work)
    owner = plan["owner"]
    mount("sevex-work", work, "tmpfs", MS_NOSUID | MS_NODEV,
          f"mode=0700,uid={owner[0]},gid={owner[1]},size={plan['bytes']},nr_inodes={plan['files']}")


def join(files: list[str]) -> None:
    """Into the sandbox's cgroup (one join file per hierarchy, cgroup.py's `Layout.join_file`), before anything
    else: every process the launcher starts is then inside it, bounded and counted. "0" is the writer; a v1
    `tasks` file moves only the writing thread, so this process must have no other (it starts none)."""
    if files and len(os.listdir("/proc/self/task")) != 1:
        sys.exit("launcher: more than one thread before joining the sandbox's cgroup")
    for path in files:
        with open(path, "w") as f:
            f.write("0")


def main() -> None:
    """The plan comes marshalled (in hex), which the same interpreter binary writes and reads: this process
    imports only modules built into the interpreter or one C extension each, since json, contextlib and the
    ctypes package would more than double its start, some 16 ms of CPU a sandbox (bench/README.md)."""
    plan, parent = marshal.loads(bytes.fromhex(sys.argv[1])), int(sys.argv[2])
    argv = sys.argv[sys.argv.index("--") + 1:]
    join(plan["cgroups"])
    die_with(parent)  # nothing to clean up before bubblewrap starts
    root = os.geteuid() == 0
    os.set_inheritable(plan["report"], False)  # ours: bubblewrap and the program never hold it
    program = os.open(argv[0], os.O_RDONLY | os.O_CLOEXEC)  # executed by fd: the stage may cover its folder
    with open(program, "rb", closefd=False) as head:
        os.set_inheritable(program, head.read(2) == b"#!")  # a script's interpreter reopens it as /dev/fd/N
    own_namespaces(root)
    # opened in this mount namespace (a bind's source must be), before the stage covers any of them
    sources = [os.open(source, os.O_PATH | os.O_CLOEXEC) for source in plan["binds"]]
    stage(plan, sources)
    sys.exit(supervise(program, argv, parent, tuple(plan["user"]) if root else None, plan["report"]))


if __name__ == "__main__":
    main()
