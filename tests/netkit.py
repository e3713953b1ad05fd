"""Network helpers shared by the tests (a unique module name, importable from every test folder)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port nobody listens on now: for a server to start on, or for a refused connection."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
