"""Helpers of the executor tests: worker specs, run-record comparison and the `illusion-agent run` they kill.

A named module (not conftest.py), so test files import it by name whatever other test folders run with them.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from trompe_agents.backends.base import BackendOptions
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.job import WorkerSpec

SCRIPTED = Path(__file__).parents[1] / "illusion"  # scripted.py: models the function backend loads by name
TIMING = ("seconds", "finished")  # the only fields that may differ between two runs of the same samples


def spec_for(out: Path, model: str = "scripted:line_then_yes") -> WorkerSpec:
    return WorkerSpec(backend="function", options=BackendOptions(model=model), config=AgentConfig(task=1),
                      out=out)


def comparable(out: Path) -> list[dict]:
    """The run's records by sample id, without timing fields."""
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return sorted(({k: v for k, v in r.items() if k not in TIMING} for r in rows), key=lambda r: r["id"])


def run_cli(probe_dir: Path, out: Path, *extra: str, model: str = "scripted:gated_line_then_yes") -> subprocess.Popen:
    """`illusion-agent run` with a scripted model (by default one that hangs after three answers until `gate(out)`
    exists, so a kill lands mid-run however slow the machine is).

    Its temp dir is beside `out`: a process killed with SIGKILL cannot remove its spill folder.
    """
    tmp = out.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SCRIPTED), os.environ.get("PYTHONPATH", "")]),
           "TMPDIR": str(tmp), "TROMPE_TEST_GATE": str(gate(out))}
    cmd = [sys.executable, "-m", "trompe_agents.illusion.cli", "--backend", "function",
           "--model", model, "run", "--dataset", str(probe_dir), "--task", "1",
           "--out", str(out), "--concurrency", "2", "--no-progress", *extra]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def gate(out: Path) -> Path:
    """The file that lets the gated scripted model answer past its third answer (touch it before a resume)."""
    return out.parent / "gate"


def result_lines(out: Path) -> list[str]:
    path = out / "results.jsonl"
    return [line for line in path.read_text().splitlines() if line.endswith("}")] if path.exists() else []
