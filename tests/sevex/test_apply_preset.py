"""`sevex apply --preset paper`: the preset and every difference from the paper said on the console are kept
beside the results file they qualify (its lines stay one outcome each), through the loopback fake Gemini API."""

from __future__ import annotations

import json

from trompe_agents.sevex.cli import main, preset_file
from trompe_agents.testing import FakeVendor, final

SCRIPTED = ["--explorer-backend", "function", "--explorer-model", "scripted_models:explorer", "--target-backend",
            "function", "--target-model", "scripted_models:target", "--no-progress", "--sandbox", "none"]


def test_apply_keeps_the_preset_and_its_refusals_beside_its_results(tmp_path, dev_set, monkeypatch, capsys):
    run, out = tmp_path / "run", tmp_path / "applied.jsonl"
    assert main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), "--iterations", "0",
                 *SCRIPTED]) == 0
    capsys.readouterr()
    monkeypatch.setenv("FAKE_KEY", "test-key")
    with FakeVendor("gemini", [final("{yes}")]) as fake:  # Gemini 3: thinking levels only, the lowest still thinks
        assert main(["apply", str(run), "--dataset", str(dev_set), "--include-dev", "--preset", "paper",
                     "--target-model", "gemini-3-flash-preview", "--target-base-url", fake.base_url,
                     "--target-api-key-env", "FAKE_KEY", "--max-retries", "0", "--no-progress", "--sandbox", "none",
                     "--out", str(out)]) == 0
    captured = capsys.readouterr()
    said = [line.removeprefix("sevex: preset paper: ") for line in captured.err.splitlines() if "preset paper" in line]
    record = json.loads(preset_file(out).read_text())
    assert record["name"] == "paper" and record["notes"] == said and len(said) == 2
    assert said[0].startswith("--target-model gemini-3-flash-preview given") and "cannot turn thinking off" in said[1]
    assert f"(preset: {preset_file(out)})" in captured.out
    assert all("id" in json.loads(line) for line in out.read_text().splitlines())  # outcomes only

    assert main(["apply", str(run), "--dataset", str(dev_set), "--include-dev", "--out", str(out), *SCRIPTED[4:]]) == 0
    assert not preset_file(out).exists()  # results of another target: the earlier preset no longer describes them
