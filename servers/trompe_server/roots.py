"""The folders `trompe-server` may open images from: those named by --root, else the working directory only when
it is a folder a person chose to work in.

Desktop clients start their servers in `/` (Claude Desktop does) or in the home folder, so taking the working
directory as given would offer every file the user can read to whatever the model is told to open. Without
--root, a working directory that is `/`, a home folder or one above it, or a system folder is no root at all:
the server then reads only images sent inline (data: URLs, base64), which is what chat clients send, rather than
refusing to start, which a desktop client shows only as a server that failed.
"""

from __future__ import annotations

from pathlib import Path

# The Filesystem Hierarchy Standard 3.0's top-level folders of the system itself (chapter 3), leaving out those
# that hold people's own files (/home, /media, /mnt, /opt, /srv, /tmp).
SYSTEM_FOLDERS = tuple(Path(p) for p in ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
                                         "/proc", "/root", "/run", "/sbin", "/sys", "/usr", "/var"))
NO_ROOT = ("trompe-server: no --root given and the working directory {cwd} is {why}: serving images sent inline "
           "only; to open files by path, start it with --root FOLDER (repeatable), e.g. --root ~/Pictures")


def implicit_root(cwd: Path, home: Path) -> tuple[Path | None, str]:
    """The working directory as the root, or None and why it is not one (for NO_ROOT)."""
    cwd, home = cwd.resolve(), home.resolve()
    if cwd.is_relative_to(home) and cwd != home:
        return cwd, ""
    if cwd == home or cwd in home.parents:
        return None, "the home folder or above it" if cwd != Path("/") else "the file system's root"
    if any(cwd.is_relative_to(system) for system in SYSTEM_FOLDERS):
        return None, "a system folder"
    return cwd, ""


def server_roots(given: list[Path] | None, cwd: Path, home: Path) -> tuple[list[Path], str | None]:
    """The roots to serve and the line to say when there are none: --root's folders, else the safe implicit one."""
    if given:
        return [r.expanduser().resolve() for r in given], None
    root, why = implicit_root(cwd, home)
    return ([root], None) if root is not None else ([], NO_ROOT.format(cwd=cwd, why=why))
