"""Where generated code runs: the strongest OS sandbox available, or a refusal that says how to get one."""

from __future__ import annotations

from .base import Isolation, Launch, SandboxLimits, SandboxUnavailable
from .bwrap import Bwrap
from .none import NoIsolation

CHOICES = ("auto", "bwrap", "none")
HOW_TO_FIX = ("install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install "
              "bubblewrap; see docs/install.md), or pass --sandbox none to run trusted code only without isolation")

__all__ = ["CHOICES", "Isolation", "Launch", "SandboxLimits", "SandboxUnavailable", "choose"]


def choose(name: str = "auto") -> Isolation:
    """`auto` and `bwrap`: bubblewrap, or SandboxUnavailable; `none` only when asked for by name."""
    if name == "none":
        return NoIsolation()
    if name not in CHOICES:
        raise ValueError(f"--sandbox: expected one of {', '.join(CHOICES)}, got {name!r}")
    sandbox = Bwrap()
    reason = sandbox.unavailable()
    if reason:
        raise SandboxUnavailable(f"refusing to run generated code without an OS sandbox: {reason}; {HOW_TO_FIX}")
    return sandbox
