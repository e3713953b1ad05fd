"""Programs run through the sandbox by a process of user `nobody`, when the tests run as root.

Nobody gets the system interpreter (unprivileged.py) and a world-readable copy of the sandbox's own modules,
since the project may live under a 0700 home; the copy's `isolation` package picks bubblewrap directly
instead of through the plugin registry, which needs the project's dependencies: the sandbox itself
(sandbox.py, bwrap.py, launcher.py) uses only the standard library, and the failure kinds it names
(failures.py) too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sandbox_support import require_os_sandbox
from unprivileged import nobody_python, run_as_nobody

from trompe_agents.sevex.sandbox import SandboxLimits

AGENTS = Path(__file__).resolve().parents[2] / "agents"

STANDALONE_ISOLATION = '''
from .base import Isolation, Launch, SandboxLimits, SandboxUnavailable
from .bwrap import Bwrap


def choose(name="auto"):
    sandbox = Bwrap()
    reason = sandbox.unavailable()
    if reason:
        raise SandboxUnavailable(reason)
    return sandbox
'''

RUNNER = '''
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
from trompe_agents.sevex.sandbox import Sandbox, SandboxLimits
limits = SandboxLimits(**json.loads(sys.argv[2]))
programs = json.loads(sys.argv[3])

async def crop(args):
    return "img_001"

async def run():
    async with Sandbox(limits) as box:
        out = []
        for code in programs:
            result = await box.run(code, "", ["original"], "", {"crop": ["image", "box"]}, {"crop": crop})
            out.append({"kind": result.kind, "answer": result.answer, "error": result.error})
        print(json.dumps(out))

asyncio.run(run())
'''

BOUNDS = '''
import json, sys
sys.path.insert(0, sys.argv[1])
from trompe_agents.sevex.isolation import choose
from trompe_agents.sevex.sandbox import SandboxLimits
print(choose().bounds(SandboxLimits(**json.loads(sys.argv[2]))))
'''


@contextlib.contextmanager
def sandbox_copy() -> Iterator[Path]:
    """A world-readable copy of the sandbox's modules in /tmp (traversable by nobody), removed afterwards."""
    nobody_python()
    require_os_sandbox()
    copy = Path(tempfile.mkdtemp(prefix="trompe-unprivileged-", dir="/tmp"))
    try:
        for package in ("trompe_agents/__init__.py", "trompe_agents/failures.py", "trompe_agents/sevex/__init__.py"):
            (copy / package).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(AGENTS / package, copy / package)
        for path in [*(AGENTS / "trompe_agents/sevex").glob("sandbox*.py"),
                     *(AGENTS / "trompe_agents/sevex/isolation").glob("*.py")]:
            target = copy / path.relative_to(AGENTS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
        (copy / "trompe_agents/sevex/isolation/__init__.py").write_text(STANDALONE_ISOLATION)
        for folder, _, files in os.walk(copy):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
        yield copy
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def run_programs_as_nobody(programs: list[str], limits: SandboxLimits) -> list[dict]:
    """Each program's kind, answer and error, run by user nobody (a skip when not root or not possible)."""
    with sandbox_copy() as copy:
        done = run_as_nobody(["-c", RUNNER, str(copy), json.dumps(dataclasses.asdict(limits)),
                              json.dumps(programs)], timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def bounds_as_nobody(limits: SandboxLimits) -> str:
    """The line `sevex` prints about the sandbox's bounds, as user nobody would see it."""
    with sandbox_copy() as copy:
        done = run_as_nobody(["-c", BOUNDS, str(copy), json.dumps(dataclasses.asdict(limits))], timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()
