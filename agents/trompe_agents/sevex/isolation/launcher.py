"""Starts bubblewrap for one sandbox: never as host root, with a work tmpfs whose bytes and files are capped.

Run by the host interpreter (`python -I -S launcher.py PLAN PARENT -- bwrap ...`), outside the sandbox and
before any generated code exists, so it is trusted; standard library only. In a mount namespace of its own
(and, when not root, a user namespace of its own, where it may mount) it covers the stage folder with a
tmpfs holding the work tmpfs, mounted with `size=` and `nr_inodes=` (bubblewrap's `--tmpfs` caps neither the
file count nor, before 0.9, the bytes), and a bind of every read-only source, opened before anything is
covered. Started by root it then drops to the plan's unprivileged host uid before bubblewrap creates its
user namespace (the staged binds stay reachable for that uid even when the interpreter lives under a 0700
home such as /root): the program's uid is that host uid, never uid 0, so host sysctls, device nodes and
root-owned files refuse it whatever the sandbox maps. Every mount lives only in this process's namespace,
so the host's mount table is never touched.

It then stays as bubblewrap's parent and a child subreaper, and exits with bubblewrap's status. bubblewrap
sets its sandbox init's parent-death signal only after creating it, so a parent killed in between orphans
that init for good; when SEVEX dies (SIGTERM, our own parent-death signal) the launcher kills bubblewrap and
every orphan re-parented to it before it exits.
"""

import ctypes
import json
import os
import select
import signal
import sys

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36

libc = ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    check(libc.mount(_bytes(source), _bytes(target), _bytes(fstype), ctypes.c_ulong(flags), _bytes(data)),
          f"mount {target}")


def die_with(parent: int) -> None:
    """SIGKILL this process when the parent dies, and exit now if it already has (the race PDEATHSIG has)."""
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
    if os.getppid() != parent:
        os._exit(1)


class ParentDied(Exception):
    """SEVEX is gone: the sandbox must go too."""


def parent_died(signum, frame) -> None:
    raise ParentDied


def children() -> list[int]:
    """This process's children, bubblewrap's orphans included once they are re-parented here."""
    return [int(pid) for task in os.listdir("/proc/self/task")
            for pid in open(f"/proc/self/task/{task}/children").read().split()]


def kill_all() -> None:
    """SIGKILL every child until none is left (killing bubblewrap can orphan its init to us meanwhile)."""
    while True:
        for pid in children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def supervise(program: int, argv: list[str], parent: int) -> int:
    """Run bubblewrap as a child; its exit status as a shell reports it (128 + signal)."""
    check(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl")
    alive_read, alive_write = os.pipe()  # closed by the kernel when this process dies
    signal.signal(signal.SIGTERM, parent_died)
    try:
        child = os.fork()
        if child == 0:
            os.close(alive_write)
            check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
            if select.select([alive_read], [], [], 0)[0]:  # the launcher died before the signal was set
                os._exit(1)
            os.close(alive_read)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.execve(program, argv, {})
        os.close(alive_read)
        check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0), "prctl")  # was SIGKILL until now
        if os.getppid() != parent:  # it died while we forked
            raise ParentDied
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                kill_all()  # what bubblewrap left (normally nothing)
                return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    except ParentDied:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
        kill_all()
        return 1


def own_namespaces(root: bool) -> None:
    """A private mount namespace; when not root, inside a user namespace mapping this uid to its root."""
    uid, gid = os.getuid(), os.getgid()
    check(libc.unshare(CLONE_NEWNS if root else CLONE_NEWNS | CLONE_NEWUSER), "unshare")
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


def main() -> None:
    plan, parent = json.loads(sys.argv[1]), int(sys.argv[2])
    argv = sys.argv[sys.argv.index("--") + 1:]
    die_with(parent)  # nothing to clean up before bubblewrap starts
    root = os.geteuid() == 0
    program = os.open(argv[0], os.O_RDONLY | os.O_CLOEXEC)  # executed by fd: the stage may cover its folder
    with open(program, "rb", closefd=False) as head:
        os.set_inheritable(program, head.read(2) == b"#!")  # a script's interpreter reopens it as /dev/fd/N
    own_namespaces(root)
    # opened in this mount namespace (a bind's source must be), before the stage covers any of them
    sources = [os.open(source, os.O_PATH | os.O_CLOEXEC) for source in plan["binds"]]
    stage(plan, sources)
    if root:
        uid, gid = plan["user"]
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        die_with(parent)  # a change of uid clears the parent-death signal
    sys.exit(supervise(program, argv, parent))


if __name__ == "__main__":
    main()
