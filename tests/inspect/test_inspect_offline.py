"""Inspect with no key and no network: the offline recipe of docs/inspect.md runs exactly as written and gives a
real accuracy; a trompe function plays the model in Inspect as it does in `illusion-agent run`; and an eval whose
every sample fails is Inspect's error, never a success at 0%."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from inspect_ai.log import read_eval_log
from test_inspect_tasks import TASKS, inspect_eval, inspect_records, trompe_run

from trompe_agents.datasets import load_dataset

ROOT = Path(__file__).resolve().parents[2]
DEAD_PROXY = "http://127.0.0.1:9"  # every HTTP(S) request fails at once: no network, whatever the machine has


def offline_env(tmp_path: Path) -> dict[str, str]:
    """A user's shell with no keys and no network; the console scripts of this interpreter first."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", HOME=str(tmp_path),
               HTTP_PROXY=DEAD_PROXY, HTTPS_PROXY=DEAD_PROXY, http_proxy=DEAD_PROXY, https_proxy=DEAD_PROXY,
               NO_PROXY="", no_proxy="", HF_HUB_OFFLINE="1", NO_COLOR="1")
    return env


def recipe() -> str:
    """The marked command block of docs/inspect.md's "Offline" section, as a user copies it."""
    section = (ROOT / "docs" / "inspect.md").read_text(encoding="utf-8").split("\n## Offline\n", 1)[1]
    return re.search(r"<!-- run -->\s*\n```bash\n(.*?)\n```", section.split("\n## ", 1)[0], re.S).group(1)


def only_log(folder: Path):
    [path] = folder.glob("*.eval")
    return read_eval_log(str(path))


def test_the_offline_recipe_runs_as_written_and_gives_a_real_accuracy(tmp_path):
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", recipe()], cwd=tmp_path, env=offline_env(tmp_path),
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    log = only_log(tmp_path / "logs")
    assert log.status == "success" and [s.error for s in log.samples] == [None] * 10
    first = list(load_dataset(tmp_path / "data" / "probes"))[:10]
    expected = sum(s.answer == "yes" for s in first) / 10  # the recipe's model answers yes to everything
    assert 0 < expected < 1
    accuracy = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}["accuracy"]
    assert accuracy == expected


def test_an_eval_whose_samples_all_fail_is_an_inspect_error_not_a_success(tmp_path):
    env = offline_env(tmp_path)
    subprocess.run(["trompe", "probes", "generate", "--suite", "illusions", "--n", "3", "--size", "128", "--out",
                    "probes"], cwd=tmp_path, env=env, check=True, capture_output=True, timeout=300)
    subprocess.run(["inspect", "eval", "trompe/probes", "-T", "dataset=probes", "--model", "mockllm/model",
                    "--log-dir", "logs"], cwd=tmp_path, env=env, capture_output=True, timeout=600,
                   stdin=subprocess.DEVNULL)
    log = only_log(tmp_path / "logs")
    assert log.status == "error"  # not "success" at 0%
    errors = [s.error.message for s in log.samples if s.error is not None]
    assert errors and all("trompe: no answer (" in message for message in errors)
    assert not any(s.scores for s in log.samples)  # no sample was scored 0


async def test_a_trompe_function_answers_in_inspect_as_in_illusion_agent_run(tmp_path):
    args = TASKS["probes"](tmp_path / "data")
    log = await inspect_eval("probes", args, "trompe_function/inspect_scripts:trompe_script", tmp_path / "logs")
    ours = await trompe_run(args, tmp_path / "run")
    theirs = inspect_records(log)
    assert {i: (r["answer"], r["tool_calls"]) for i, r in theirs.items()} == {
        i: (r["answer"], r["tool_calls"]) for i, r in ours.items()}
    assert all(r["usage"]["input_tokens"] == 0 for r in theirs.values())  # a function reads no tokens
