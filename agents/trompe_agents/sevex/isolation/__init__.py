"""Where generated code runs: the strongest OS sandbox available, or a refusal that says how to get one."""

from __future__ import annotations

from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins

from .base import Isolation, Launch, SandboxLimits, SandboxUnavailable
from .bwrap import Bwrap
from .none import NoIsolation

AUTO = "auto"  # the strongest OS sandbox built in: bubblewrap
HOW_TO_FIX = ("install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install "
              "bubblewrap; see docs/install.md), or pass --sandbox none to run trusted code only without isolation")

__all__ = ["Isolation", "Launch", "SandboxLimits", "SandboxUnavailable", "choose", "sandbox_names"]


@hookimpl
def register_sandboxes(register):
    """The built-in sandboxes, registered as a plugin's are; `none` runs code unisolated, only when named."""
    register("bwrap", Bwrap)
    register("none", NoIsolation)


def _sandboxes() -> dict:
    return dict(default_plugins().registry("register_sandboxes", "sandbox"))


def sandbox_names() -> list[str]:
    """`--sandbox` choices: auto, then every sandbox the built-ins and the installed plugins register."""
    return [AUTO, *_sandboxes()]


def choose(name: str = AUTO) -> Isolation:
    """`auto` and `bwrap`: bubblewrap, or SandboxUnavailable; `none` only when asked for by name; a plugin's by
    its name, refused the same way when it says it cannot run here."""
    sandboxes = _sandboxes()
    if name != AUTO and name not in sandboxes:
        raise ValueError(f"--sandbox: expected one of {', '.join(sandbox_names())}, got {name!r}")
    sandbox = sandboxes["bwrap" if name == AUTO else name]()
    reason = sandbox.unavailable()
    if reason:
        raise SandboxUnavailable(f"refusing to run generated code without an OS sandbox: {reason}; {HOW_TO_FIX}")
    return sandbox
