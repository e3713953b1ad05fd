"""Test code run again as user `nobody` when the suite runs as root (as CI runs it): root reads every file and
may signal every process, so what file permissions and uids decide is tested only by an unprivileged user.

The project's interpreter may live under a 0700 home (pyenv under /root), so these runs use the system's
python3; one that cannot run here (not root, no `nobody`, no system python3) is a skip that says why.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys

import pytest


def nobody_python() -> tuple[str, pwd.struct_passwd]:
    """The system interpreter and user `nobody`, or a skip naming what is missing."""
    if os.getuid() != 0:
        pytest.skip("not root: this test's other cases already run as an unprivileged user")
    try:
        user = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody on this machine")
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 that user nobody can run")
    return python, user


def run_as_nobody(args: list[str], timeout: float, cwd: str = "/") -> subprocess.CompletedProcess:
    """`python3 -I -B ARGS` as user `nobody` (no groups, empty environment, nothing written beside sources)."""
    python, user = nobody_python()
    return subprocess.run([python, "-I", "-B", *args], user=user.pw_uid, group=user.pw_gid, extra_groups=[],
                          cwd=cwd, env={}, capture_output=True, text=True, timeout=timeout, check=False)


def site_prelude() -> str:
    """Code that gives the system interpreter this environment's packages (the same Python minor version and
    a site folder nobody can read), or a skip saying why not."""
    site = next((p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)), None)
    if site is None:
        pytest.skip("the tests do not run in a virtual environment whose packages nobody could be given")
    probe = run_as_nobody(["-c", f"import site, sys; site.addsitedir({site!r}); import trompe_server; "
                                 "print(sys.version_info[:2])"], timeout=60)
    if probe.returncode != 0 or probe.stdout.strip() != str(tuple(sys.version_info[:2])):
        lines = (probe.stderr.strip() or probe.stdout.strip() or "?").splitlines()
        pytest.skip(f"user nobody cannot use this environment's packages with the system python3 "
                    f"({lines[-1][:200]})")
    return f"import site, sys; site.addsitedir({site!r})\n" + OLD_ASYNCIO


# redis-py imports the async_timeout backport below Python 3.11.3 (Debian 12's python3 is 3.11.2); the tests
# run this way never reach Redis, and asyncio's own timeout is what redis-py uses from 3.11.3 on
OLD_ASYNCIO = """
if sys.version_info < (3, 11, 3):
    import asyncio, types
    sys.modules.setdefault("async_timeout", types.SimpleNamespace(timeout=asyncio.timeout))
"""
