"""SEVEX candidate evaluation through the executor: `--workers 2` finds the same tree as one process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from leftovers import cgroup_folders

pytestmark = [pytest.mark.os_sandbox, pytest.mark.slow]  # generated code through the OS sandbox, in workers

SCRIPTED = Path(__file__).parents[1] / "illusion"  # scripted.py, which dying_models builds on
SEVEX_TESTS = Path(__file__).parents[1] / "sevex"  # scripted explorer/target models and the dev set writer


def explore(out: Path, dev_set: Path, *extra: str) -> str:
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(SEVEX_TESTS), os.environ.get("PYTHONPATH", "")]),
                        "TMPDIR": str(out.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "trompe_agents.sevex.cli", "explore", "--task", "probes", "--dev", str(dev_set),
         "--explorer-backend", "function", "--explorer-model", "scripted_models:explorer", "--target-backend",
         "function", "--target-model", "scripted_models:target", "--iterations", "2", "--no-progress",
         "--concurrency", "2", "--out", str(out), *extra],
        env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def tree(run: Path) -> list[dict]:
    """The tree without absolute paths, so two run folders compare equal."""
    return json.loads((run / "tree.json").read_text().replace(str(run), "RUN"))["nodes"]


def test_candidates_evaluated_by_worker_processes_give_the_same_tree(tmp_path, models_on_path):
    models_on_path(SEVEX_TESTS)
    from sevex_support import write_dev_set

    dev_set = write_dev_set(tmp_path)
    here, there = tmp_path / "here", tmp_path / "there"
    alone = explore(here, dev_set)
    spread = explore(there, dev_set, "--workers", "2")
    assert tree(there) == tree(here)  # every candidate's per-sample results, rewards and the search path
    assert spread.splitlines()[0] == alone.splitlines()[0]  # "best dev accuracy ... (node N: ...)"


def test_a_dying_worker_stops_explore_in_one_line_with_how_to_resume(tmp_path, models_on_path):
    models_on_path(SEVEX_TESTS)
    from sevex_support import write_dev_set

    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(SEVEX_TESTS), str(Path(__file__).parent), str(SCRIPTED),
                                                       os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "run"
    before = cgroup_folders()
    done = subprocess.run(
        [sys.executable, "-m", "trompe_agents.sevex.cli", "explore", "--task", "probes", "--dev",
         str(write_dev_set(tmp_path)), "--explorer-backend", "function", "--explorer-model",
         "scripted_models:explorer", "--target-backend", "function", "--target-model", "dying_models:target_dies",
         "--iterations", "1", "--no-progress", "--workers", "2", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("sevex: a worker process failed (trompe-worker-")
    assert "--resume" in done.stderr
    # the workers (one died, the other was stopped) could not remove their sandboxes' cgroups: the driver did
    # (another run's live sandboxes on a shared machine are not this run's: only folders of dead owners count)
    abandoned = {f for f in cgroup_folders() - before if not Path(f"/proc/{f.name.split('-')[2]}").exists()}
    assert abandoned == set()
