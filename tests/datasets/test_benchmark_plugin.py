"""A third-party benchmark in one module: installed as pip lays a distribution out (the module beside its
*.dist-info with an entry_points.txt, https://packaging.python.org/en/latest/specifications/entry-points/) on the
PYTHONPATH of the real commands, it is detected, run, scored by its own harness scorers, explored by SEVEX and
evaluated by Inspect, with no other edit. The module is the one docs/plugins.md shows, read from there."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

ROOT = Path(__file__).parents[2]
HERE = Path(__file__).parent
TROMPE = [sys.executable, "-c", "import sys; from trompe_agents.cli import main; sys.exit(main())"]
# item, colour, truth: always_yes (tests/datasets/scripted_answers.py) is right on the red ones
ITEMS = [("r1", "red", "yes"), ("r2", "red", "yes"), ("b1", "blue", "no"), ("b2", "blue", "no")]


def documented_module() -> str:
    """The one-module benchmark of docs/plugins.md."""
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    return re.search(r"<!-- plugin register_benchmarks -->\n`acme_bench/__init__.py`:\n\n```python\n(.*?)```", text,
                     re.S).group(1)


@pytest.fixture
def installed(tmp_path) -> dict[str, str]:
    """A site folder holding the acme distribution, and the environment of a shell that has it installed."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "acme_bench.py").write_text(documented_module())
    info = site / "acme_bench-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-bench\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[trompe]\nacme = acme_bench\n")
    path = os.pathsep.join([str(site), str(HERE), str(HERE.parent / "sevex"), os.environ.get("PYTHONPATH", "")])
    return os.environ | {"PYTHONPATH": path, "HOME": str(tmp_path), "NO_COLOR": "1",
                         "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.fixture
def acme_csv(tmp_path) -> Path:
    folder = tmp_path / "acme"
    folder.mkdir()
    for item, colour, _ in ITEMS:
        Image.new("RGB", (32, 32), colour).save(folder / f"{item}.png")
    lines = ["item,picture,ask,truth,kind"] + [f"{i},{i}.png,Is the square red?,{t},{c}" for i, c, t in ITEMS]
    (folder / "acme.csv").write_text("\n".join(lines) + "\n")
    return folder / "acme.csv"


def run(command: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def test_a_plugin_benchmark_is_run_scored_and_explored_by_the_real_commands(installed, acme_csv, tmp_path):
    info = run([*TROMPE, "dataset", "info", str(acme_csv)], installed, tmp_path)
    assert "acme" in info and "illusion agent task: 1" in info  # detected from its columns, Task I
    out = tmp_path / "run"
    run([*TROMPE, "illusion", "run", "--dataset", str(acme_csv), "--out", str(out), "--backend", "function",
         "--model", "scripted_answers:always_yes", "--router", "regex", "--no-progress", "--concurrency", "1"],
        installed, tmp_path)
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {r["id"]: r["label"] for r in lines} == {i: t for i, _, t in ITEMS}
    for scorer in ("official", "strict"):
        figures = json.loads(run([*TROMPE, "illusion", "score", str(out), "--scorer", scorer, "--json"],
                                 installed, tmp_path))
        assert figures["scorer"] == scorer and figures["metric"]["accuracy"] == 0.5
        assert {g["name"]: g["accuracy"] for g in figures["groups"]} == {"blue": 0.0, "red": 1.0}
    explored = tmp_path / "explore"
    run([*TROMPE, "sevex", "explore", "--task", "AcmeRed", "--dev", str(acme_csv), "--out", str(explored),
         "--iterations", "0", "--explorer-backend", "function", "--explorer-model", "scripted_models:explorer",
         "--target-backend", "function", "--target-model", "scripted_models:target", "--no-progress",
         "--sandbox", "none"], installed, tmp_path)
    assert json.loads((explored / "run.json").read_text())["task"] == "AcmeRed"


def test_a_plugin_benchmark_is_an_inspect_task(installed, acme_csv, tmp_path):
    from inspect_ai.log import read_eval_log

    run(["inspect", "eval", "trompe/acme", "-T", f"dataset={acme_csv}", "--model",
         "trompe_function/scripted_answers:always_yes", "--log-dir", "logs"], installed, tmp_path)
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    metrics = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    assert metrics["accuracy"] == 0.5 and metrics["strict mean over kinds"] == 0.5, metrics  # both scorers
    assert metrics["category red"] == 1.0 and metrics["category blue"] == 0.0
