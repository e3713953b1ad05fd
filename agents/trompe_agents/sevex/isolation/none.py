"""`--sandbox none`: no OS isolation; the program runs as this user, with this user's files and network.

For trusted code only: just the child's rlimits and its Python-level guard apply, and the guard shares the
interpreter with the code it guards, so it is no boundary.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from .base import CHILD, Isolation, Launch, SandboxLimits


class NoIsolation(Isolation):
    name = "none"
    own_user = False

    def unavailable(self) -> str | None:
        return None

    def bounds(self, limits: SandboxLimits) -> str:
        return (f"no sandbox: programs run as you, bounded only by rlimits ({limits.memory_bytes // 2**20:,} MiB "
                f"of address space, {limits.cpu_seconds} s of CPU); trusted code only")

    def launch(self, limits: SandboxLimits) -> Launch:
        folder = Path(tempfile.mkdtemp(prefix="sevex-sandbox-"))
        return Launch([sys.executable, "-I", "-S", str(CHILD), str(folder), limits.for_child(self.own_user)],
                      cwd=str(folder), folder=folder)
