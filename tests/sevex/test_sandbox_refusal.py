"""`sevex explore` / `apply` refuse to run generated code without an OS sandbox, and escape attempts that do
run are errors in the run's results, never scored answers."""

from __future__ import annotations

import json

import pytest
from sandbox_support import require_os_sandbox

from trompe_agents.sevex.cli import main
from trompe_agents.sevex.isolation import choose
from trompe_agents.sevex.isolation.bwrap import Bwrap

SCRIPTED = ["--explorer-backend", "function", "--explorer-model", "scripted_models:explorer", "--target-backend",
            "function", "--target-model", "scripted_models:target", "--no-progress", "--concurrency", "2"]
REFUSAL = ("sevex: refusing to run generated code without an OS sandbox: bubblewrap (bwrap) is not installed; "
           "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap")


@pytest.fixture
def no_bwrap(tmp_path, monkeypatch):
    """A PATH without bubblewrap (an empty folder)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_explore_without_a_sandbox_refuses_in_one_line_and_starts_nothing(tmp_path, dev_set, no_bwrap, capsys):
    run = tmp_path / "run"
    assert main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), *SCRIPTED]) == 2
    err = capsys.readouterr().err
    assert err.startswith(REFUSAL) and err.count("\n") == 1 and "--sandbox none" in err
    assert not run.exists()


def test_apply_without_a_sandbox_refuses(tmp_path, dev_set, no_bwrap, capsys):
    assert main(["apply", str(tmp_path), "--dataset", str(dev_set), "--target-backend", "function",
                 "--target-model", "scripted_models:target"]) == 2
    assert capsys.readouterr().err.startswith(REFUSAL)


def test_sandbox_none_is_an_explicit_choice_that_runs(tmp_path, dev_set, no_bwrap, capsys):
    run = tmp_path / "run"
    assert main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), "--iterations", "0",
                 "--sandbox", "none", *SCRIPTED]) == 0
    assert "best dev accuracy 0.500" in capsys.readouterr().out


def test_a_bwrap_that_cannot_create_namespaces_is_refused_with_its_reason(tmp_path):
    """Where user namespaces are restricted, bwrap prints "bwrap: setting up uid map: Permission denied" and
    exits 1 (reported on Ubuntu 24.04 in https://github.com/Kron4ek/Conty/issues/139)."""
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)  # as installed: root drops to an unprivileged uid before it runs bubblewrap
    reason = Bwrap(str(fake)).unavailable()
    assert reason == "bubblewrap could not start a sandbox (bwrap: setting up uid map: Permission denied)"


def test_an_unknown_sandbox_name_is_a_clear_error():
    with pytest.raises(ValueError, match="--sandbox: expected one of auto, bwrap, none, got 'docker'"):
        choose("docker")


def test_escape_attempts_through_sevex_explore_are_errors_and_the_run_goes_on(tmp_path, dev_set, monkeypatch):
    require_os_sandbox()
    canary = tmp_path / "secret.txt"
    canary.write_text("canary-explore-secret")
    monkeypatch.setenv("SEVEX_TEST_CANARY", str(canary))
    run = tmp_path / "run"
    args = ["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), "--timeout", "20", *SCRIPTED]
    attacker = ["--explorer-model", "attack_models:explorer"]
    assert main([*args, "--iterations", "2", *attacker]) == 0
    # --resume goes on past the oversize node instead of meeting the same crash again
    assert main(["explore", "--out", str(run), "--resume", "--iterations", "3", "--no-progress", *attacker]) == 0
    tree = json.loads((run / "tree.json").read_text())
    attacks = [n for n in tree["nodes"] if n.get("experiment") and n["id"] != 0]
    assert len(attacks) >= 3
    kinds: set[str] = set()
    for node in attacks:
        results = [json.loads(line) for line in (run / "nodes" / str(node["id"]) / "results.jsonl").open()]
        assert all(r["error_kind"] in ("forbidden", "oversize") and r["error"] and not r["correct"] for r in results)
        assert "canary-explore-secret" not in json.dumps(results)
        kinds |= {r["error_kind"] for r in results}
        assert node["experiment"]["reward"] == 0
    assert kinds == {"forbidden", "oversize"}
    assert json.loads((run / "state.json").read_text())["iteration"] == 3
