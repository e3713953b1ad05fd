"""`sevex explore` checks everything before it writes anything, and the naive baseline with a function target
needs no key: the offline recipe of docs/sevex.md runs through the command line as a user types it."""

from __future__ import annotations

import json

import pytest

from clikit import status

from trompe_agents.sevex.cli import main

pytestmark = pytest.mark.os_sandbox  # the baseline's program runs in the OS sandbox

TARGET = ["--target-backend", "function", "--target-model", "scripted_models:target"]


@pytest.fixture
def no_keys(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_naive_baseline_with_a_function_target_needs_no_key(tmp_path, dev_set, no_keys, capsys):
    run = tmp_path / "run"
    assert main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), "--strategy", "naive",
                 "--iterations", "0", "--no-progress", *TARGET]) == 0
    assert "best dev accuracy" in capsys.readouterr().out
    recorded = json.loads((run / "run.json").read_text())
    assert recorded["explorer"] == {"backend": None, "model": None, "service_tier": None}  # never asked
    assert (run / "best" / "meta.json").is_file()


@pytest.mark.parametrize(("extra", "said"), [
    ([], "sevex: claude: set ANTHROPIC_API_KEY"),  # the sevex strategy asks its explorer for the root's ideas
    (["--strategy", "naive", "--tools", "nosuchtag"], "unknown tag(s) nosuchtag in --tools"),
])
def test_a_refused_explore_writes_nothing(tmp_path, dev_set, no_keys, capsys, extra, said):
    run = tmp_path / "run"
    assert status(main, ["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), "--no-progress",
                         *TARGET, *extra]) == 2
    assert said in capsys.readouterr().err
    assert not run.exists()
