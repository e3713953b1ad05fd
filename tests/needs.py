"""What a test needs from the machine: skipped on a developer's machine without it, a failure in CI (CI=true),
so CI can never pass by skipping the sandbox, Redis, Ray or the docs tools."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(what: str, how: str) -> NoReturn:
    """Stop this test because `what` is missing; `how` says how to get it."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing, and CI must run this test: {how}")
    pytest.skip(f"{what} is missing ({how})")


def os_sandbox():
    """SEVEX's OS sandbox (bubblewrap), for tests that run generated code through it."""
    from trompe_agents.sevex.isolation import SandboxUnavailable, choose

    try:
        return choose("bwrap")
    except SandboxUnavailable as exc:
        missing("the OS sandbox", str(exc))
