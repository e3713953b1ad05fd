"""`sevex explore --preset paper`: seed 002's settings (50 iterations, lambda_expl 0.5, lambda_novel 0.15,
lambda_sat 0.5, k 3, a dev set of 30, Gemini-2.5-flash with thinking off as the benchmark model), through the
loopback fake Gemini API (`generationConfig.thinkingConfig` as ai.google.dev/api/generate-content documents it)."""

from __future__ import annotations

import json

import pytest

from trompe_agents.sevex.cli import main
from trompe_agents.testing import FakeVendor, final

pytestmark = pytest.mark.os_sandbox  # explore starts the OS sandbox before anything else


def explore(run, dev_set, fake, model: str):
    """The paper's Gemini-2.5-flash is retired (models.toml), refused unless told: the fake still answers it."""
    return main(["explore", "--preset", "paper", "--task", "probes", "--dev", str(dev_set), "--out", str(run),
                 "--iterations", "0", "--explorer-backend", "function", "--explorer-model",
                 "scripted_models:explorer", "--target-backend", "gemini", "--target-model", model,
                 "--target-base-url", fake.base_url, "--target-api-key-env", "FAKE_KEY", "--max-retries", "0",
                 "--target-backend-option", "model_check=false", "--no-progress"])


def thinking_sent(fake: FakeVendor) -> list:
    return [(body.get("generationConfig") or {}).get("thinkingConfig") for body in fake.bodies]


def test_paper_preset_records_the_papers_search_settings_and_turns_thinking_off(tmp_path, dev_set, monkeypatch,
                                                                                capsys):
    monkeypatch.setenv("FAKE_KEY", "test-key")
    run = tmp_path / "run"
    with FakeVendor("gemini", [final("{yes}")]) as fake:
        assert explore(run, dev_set, fake, "gemini-2.5-flash") == 0
    err = capsys.readouterr().err
    budgets = [t.get("thinkingBudget", t.get("thinking_budget")) for t in thinking_sent(fake)]  # SDK spells both
    assert fake.bodies and budgets == [0] * len(fake.bodies)
    assert err.count("sevex: preset paper: --iterations 0 given; the paper uses 50") == 1
    assert "thinking" not in err  # the paper's model turns thinking off: nothing to say
    meta = json.loads((run / "run.json").read_text())
    assert meta["config"]["k"] == 3 and meta["dev_size"] == 30
    assert meta["config"]["nuct"] == {**meta["config"]["nuct"], "lambda_expl": 0.5, "lambda_novel": 0.15,
                                      "lambda_sat": 0.5}
    assert meta["preset"]["name"] == "paper" and meta["preset"]["settings"]["target_thinking"] == "off"
    assert meta["preset"]["notes"] == ["--iterations 0 given; the paper uses 50 (conducted for 50 iterations)"]


def test_a_target_that_cannot_turn_thinking_off_is_said_once_and_recorded(tmp_path, dev_set, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_KEY", "test-key")
    run = tmp_path / "run"
    with FakeVendor("gemini", [final("{yes}")]) as fake:
        assert explore(run, dev_set, fake, "gemini-3-flash-preview") == 0
    err = capsys.readouterr().err
    levels = {json.dumps(t) for t in thinking_sent(fake)}
    assert len(levels) == 1 and any(key in next(iter(levels)) for key in ("thinkingLevel", "thinking_level"))
    said = [line for line in err.splitlines() if "cannot turn thinking off" in line]
    assert len(said) == 1 and said[0].startswith("sevex: preset paper: target: gemini-3-flash-preview cannot")
    assert err.count("--target-model gemini-3-flash-preview given; the paper uses gemini-2.5-flash") == 1
    notes = json.loads((run / "run.json").read_text())["preset"]["notes"]
    assert any("cannot turn thinking off" in n for n in notes) and len(notes) == 3


@pytest.mark.parametrize("backend, model, cannot", [
    ("gemini", "gemini-2.5-flash", False),  # thinking_budget 0: off
    ("gemini", "gemini-3-flash-preview", True),  # thinking levels only: the lowest still thinks
])
def test_what_a_target_would_send_is_read_before_any_request(backend, model, cannot):
    from trompe_agents.backends.base import BackendOptions
    from trompe_agents.plugins import backend_settings, create_backend
    from trompe_agents.presets import PAPER, PRESETS, planned, refusals

    unchecked = backend_settings(backend, {"model_check": "false"})  # the paper's gemini-2.5-flash is retired
    target = create_backend(backend, BackendOptions(model=model, thinking="off", api_key="k",
                                                    base_url="http://127.0.0.1:9", settings=unchecked))
    sent = planned(target)
    assert sent["model"] == model and "thinking" in sent
    notes = refusals(PRESETS["sevex", PAPER], sent, "target")
    assert bool(notes) is cannot and all("cannot turn thinking off" in n for n in notes)
