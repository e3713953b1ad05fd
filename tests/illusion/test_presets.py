"""`--preset paper`: seed 000's settings (temperature 0, 10 rounds, rescue, the model router), what the vendor was
really sent, and every difference said once, through the loopback fake Gemini API (request bodies as
ai.google.dev/api/generate-content documents them: `generationConfig.temperature`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trompe_kernel.exits import OK
from trompe_agents.illusion.cli import build_parser, main
from trompe_agents.presets import PAPER, PRESETS, given_dests
from trompe_agents.testing import FakeVendor, final

ANSWER = '{"reasons": "measured", "answer": "yes"}'
CATEGORY = '{"category": "size comparison"}'


pytestmark = pytest.mark.usefixtures("gemini_key")  # conftest.py: the fake Gemini API takes any key


def run_paper(probe_dir: Path, out: Path, fake: FakeVendor, *extra: str) -> int:
    return main(["--backend", "gemini", "--base-url", fake.base_url, "--max-retries", "1", *extra, "run",
                 "--preset", "paper", "--dataset", str(probe_dir), "--task", "1", "--out", str(out),
                 "--no-progress", "--concurrency", "1", "--limit", "2"])


def temperatures(fake: FakeVendor) -> list:
    return [(body.get("generationConfig") or {}).get("temperature") for body in fake.bodies]


def script(body, n):
    """The model router's category request first (its schema asks for `category`), then the answer."""
    return final(CATEGORY if "category" in json.dumps(body.get("generationConfig") or {}) else ANSWER)


def test_paper_preset_sends_temperature_0_to_gemini_3_and_records_it(probe_dir, tmp_path, capsys):
    out = tmp_path / "run"
    with FakeVendor("gemini", script) as fake:
        assert run_paper(probe_dir, out, fake) == OK
    assert fake.bodies and all(t == 0 for t in temperatures(fake))  # the vendor default would be 1.0
    assert {r.model for r in fake.requests} == {"gemini-3-flash-preview"}  # the paper's default model
    assert "preset paper" not in capsys.readouterr().err  # nothing differs from the paper: nothing said
    meta = json.loads((out / "run.json").read_text())
    assert meta["preset"]["name"] == "paper" and meta["preset"]["temperature"] == 0
    assert meta["preset"]["notes"] == [] and any("rescue" in u for u in meta["preset"]["unstated"])
    agent = meta["invocations"][-1]["agent"]
    assert agent["max_rounds"] == 10 and agent["router"] == "model" and agent["rescue_rounds"] >= 1
    assert main(["submit", str(out)]) == 0
    model = json.loads((out / "model.json").read_text())
    assert model["model"] == "gemini-3-flash-preview"
    assert model["sent"]["temperature"] == [0.0] and model["sent"]["requests"] == len(fake.bodies)
    assert model["sent"]["max_output_tokens"] and model["prompts"] == meta["prompts"]
    assert "service_tier" in model["sent"]["not_sent"]  # the standard tier: no tier field in any request
    assert model["preset"]["name"] == "paper" and model["preset"]["notes"] == []


def test_a_model_that_refuses_temperature_is_said_once_and_recorded(probe_dir, tmp_path, capsys):
    out = tmp_path / "run"
    with FakeVendor("gemini", script) as fake:  # the fake answers 400 to any temperature for a *notemp* model
        assert run_paper(probe_dir, out, fake, "--model", "gemini-3-notemp") == OK
    err = capsys.readouterr().err
    assert temperatures(fake)[0] == 0 and temperatures(fake)[-1] is None  # dropped after the 400
    said = [line for line in err.splitlines() if "refused temperature 0" in line]
    assert len(said) == 1 and said[0].startswith("illusion-agent: preset paper: gemini-3-notemp refused")
    assert err.count("--model gemini-3-notemp given; the paper uses gemini-3-flash-preview") == 1
    assert main(["submit", str(out)]) == 0
    notes = json.loads((out / "model.json").read_text())["preset"]["notes"]
    assert any("refused temperature 0" in n for n in notes) and any("--model gemini-3-notemp" in n for n in notes)


def test_a_refusal_found_in_the_requests_is_kept_in_run_json_too(probe_dir, tmp_path, capsys):
    """Through `trompe illusion`: the 400 that drops the temperature is only seen mid-run; run.json keeps the line
    the console said, once, beside the typed option the preset names."""
    from trompe_agents.cli import main as trompe

    out = tmp_path / "run"
    with FakeVendor("gemini", script) as fake:
        assert trompe(["illusion", "--backend", "gemini", "--base-url", fake.base_url, "--max-retries", "1",
                       "--model", "gemini-3-notemp", "run", "--preset", "paper", "--dataset", str(probe_dir),
                       "--task", "1", "--out", str(out), "--no-progress", "--concurrency", "1", "--limit", "2"]) == 0
    said = [line.removeprefix("illusion-agent: preset paper: ") for line in capsys.readouterr().err.splitlines()
            if "preset paper" in line]
    notes = json.loads((out / "run.json").read_text())["preset"]["notes"]
    assert notes == said and len(notes) == 2
    assert notes[0].startswith("--model gemini-3-notemp given") and "refused temperature 0" in notes[1]


def test_without_the_preset_model_json_records_that_no_temperature_was_sent(probe_dir, tmp_path):
    out = tmp_path / "run"
    with FakeVendor("gemini", script) as fake:
        assert main(["--backend", "gemini", "--base-url", fake.base_url, "--model", "gemini-3-flash-preview",
                     "run", "--dataset", str(probe_dir), "--task", "1", "--out", str(out), "--no-progress",
                     "--limit", "1", "--router", "regex"]) == OK
    assert temperatures(fake) == [None] * len(fake.bodies)
    assert main(["submit", str(out)]) == 0
    model = json.loads((out / "model.json").read_text())
    assert model["sent"]["temperature"] == [None] and "preset" not in model


def test_an_option_given_against_the_preset_wins_and_is_named_once(probe_dir, tmp_path, capsys):
    out = tmp_path / "run"
    with FakeVendor("gemini", script) as fake:
        assert run_paper(probe_dir, out, fake, "--max-rounds", "4", "--backend-option", "temperature=0.7") == 0
    err = capsys.readouterr().err
    assert err.count("--max-rounds 4 given; the paper uses 10") == 1
    assert err.count("temperature=0.7 given; the paper uses 0") == 1
    assert err.count("temperature 0.7 sent; the paper uses 0") == 1  # what the requests carried, said once
    assert set(temperatures(fake)) == {0.7}
    meta = json.loads((out / "run.json").read_text())
    assert meta["invocations"][-1]["agent"]["max_rounds"] == 4 and len(meta["preset"]["notes"]) == 3


@pytest.mark.parametrize("argv, typed", [
    (["run", "--dataset", "d", "--out", "o"], {"dataset", "out"}),
    (["--max-rounds", "10", "run", "--dataset", "d", "--out", "o", "--no-tools"],
     {"max_rounds", "dataset", "out", "no_tools"}),
    (["run", "--dataset", "d", "--out", "o", "--backend-option", "temperature=0", "--model", "m"],
     {"dataset", "out", "backend_option", "model"}),
])
def test_typed_options_are_told_apart_from_defaults_even_when_equal(argv, typed):
    assert given_dests(build_parser, argv) >= typed
    assert not given_dests(build_parser, argv) & ({"max_rounds", "no_tools", "backend_option", "model"} - typed)


def test_every_preset_setting_is_an_option_of_its_app():
    dests = {a.dest for a in build_parser()._subparsers._group_actions[0].choices["run"]._actions}
    assert {s.dest for s in PRESETS["illusion-agent", PAPER].settings} <= dests
