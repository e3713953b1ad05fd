"""The model catalogue as a data file: today's models, a user file on top, status warnings, `trompe models`."""

from __future__ import annotations

import json
import re
import warnings

import pytest
from trompe_agents.backends import catalogue
from trompe_agents.backends.catalogue import BY_ID, DEFAULTS, MODELS, CatalogueError, ModelStatusWarning, lookup
from trompe_agents.cli import main
from trompe_agents import costs as pricing
from trompe_agents.illusion.pricing import PRICES, UnknownPriceWarning, cost
from trompe_agents.messages import Usage

USER = """
[models."gpt-7-nova"]
vendor = "openai"
source = "https://example.org/gpt-7-nova"

[models."gemini-3.8-flash"]
price = {input = 9.0, output = 99.0}

[aliases]
nova = "gpt-7-nova"
"""


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """Each test sees the once-per-model warnings afresh."""
    monkeypatch.setattr(catalogue, "_WARNED", set())
    monkeypatch.setattr(pricing, "_WARNED", set())


def test_todays_models_and_aliases():
    haiku = lookup("haiku")
    assert haiku.id == "haiku" and haiku.price == catalogue.Price(  # from $0.10 / $0.50; x5 over 100k
        0.10, 0.50, 0.01, 0.125, 100_000, catalogue.Price(0.5, 2.5, 0.05, 0.625))
    assert BY_ID["claude-fable-5-2"].price.input == 8.0 and BY_ID["claude-fable-5-2"].thinking == "adaptive"
    assert DEFAULTS["gemini"] == "gemini-3.8-flash" and BY_ID["gemini-3.8-flash"].efforts == ("low", "medium", "high")
    assert lookup("gemini-flash-latest").efforts == ("low", "medium", "high")
    assert BY_ID["claude-sonnet-5-5"].thinking_off == "between_tools"
    assert all(m.source.startswith("https://") for m in MODELS)


def test_every_active_catalogue_model_has_a_price_from_genai_prices():
    assert [m.id for m in MODELS if m.status == "active" and m.price is None] == []


def test_a_routed_model_warns_once_naming_its_replacement_and_is_priced_as_it():
    with pytest.warns(ModelStatusWarning, match="gemini-3.5-flash is routed: .* gemini-3.6-flash"):
        catalogue.warn_status("gemini-3.5-flash")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert catalogue.warn_status("gemini-3.5-flash") is None  # once
        assert catalogue.warn_status("gemini-3.8-flash") is None  # active: nothing to say
    usage = Usage(input_tokens=1000, output_tokens=100)
    assert cost(usage, "gemini-3.5-flash", PRICES) == cost(usage, "gemini-3.6-flash", PRICES)


def test_a_backend_warns_for_its_retired_model(monkeypatch):
    from trompe_agents.backends.base import BackendOptions
    from trompe_agents.backends.gemini import GeminiBackend

    with pytest.warns(ModelStatusWarning, match="gemini-2.5-pro is retired: .*--model gemini-3.1-pro-preview"):
        GeminiBackend(BackendOptions(model="gemini-2.5-pro", api_key="k"))


def test_an_unknown_price_says_so_and_how_to_pass_one():
    with pytest.warns(UnknownPriceWarning, match=r"no price is known for my-local-vlm: .* --price my-local-vlm=IN,OUT"):
        assert cost(Usage(input_tokens=10), "my-local-vlm", PRICES) is None


def test_a_model_that_used_no_tokens_costs_unknown_without_a_warning(recwarn):
    """A `function` backend (Python playing the model, as in the README's offline run) sends no tokens."""
    assert cost(Usage(), "mymodel:decide", PRICES) is None
    assert not [w for w in recwarn if issubclass(w.category, UnknownPriceWarning)]


def test_a_user_file_adds_models_and_replaces_single_fields(tmp_path, monkeypatch):
    user = tmp_path / "models.toml"
    user.write_text(USER)
    monkeypatch.setenv("TROMPE_MODELS", str(user))
    assert catalogue.user_file() == user
    loaded = catalogue.load(catalogue.user_file())
    models = {m.id: m for m in loaded["models"]}
    assert models["gpt-7-nova"].thinking == "effort" and models["gpt-7-nova"].price is None  # vendor defaults
    flash = models["gemini-3.8-flash"]
    assert (flash.price.input, flash.price.output) == (9.0, 99.0) and flash.efforts == ("low", "medium", "high")
    assert loaded["aliases"]["nova"] == "gpt-7-nova"
    monkeypatch.setenv("TROMPE_MODELS", "")
    assert catalogue.user_file() is None


@pytest.mark.parametrize("text, message", [
    ('[models."x"]\nvendor = "openai"\nthinkng = "effort"', "models.x: unknown field 'thinkng'"),
    ('[models."x"]\nvendor = "acme"', "models.x: vendor must be one of anthropic, openai, gemini, got 'acme'"),
    ('[models."x"]\nvendor = "openai"\nstatus = "gone"', "status must be one of active, deprecated"),
    ('[aliases]\nfoo = "nothing"', "foo = 'nothing' names no model"),
    ("[models", "model catalogue .*models.toml"),
])
def test_a_bad_user_file_is_one_error_naming_the_file_and_entry(tmp_path, text, message):
    user = tmp_path / "models.toml"
    user.write_text(text)
    with pytest.raises(CatalogueError, match=message):
        catalogue.load(user)


def test_trompe_models_lists_every_model_with_status_and_price(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for m in MODELS:
        line = next(line for line in out.splitlines() if line.startswith(m.id + " "))
        assert m.status in line and f"{m.price.input:g} / {m.price.output:g}" in line
    assert "routed -> gemini-3.6-flash" in out and "deprecated -> gpt-6.1-terra" in out
    assert re.search(r"^gpt-6\.1-terra +openai\*,openai-chat\* ", out, re.M)  # the default of both


def test_trompe_models_json_and_an_unpriced_user_model(tmp_path, capsys, monkeypatch):
    user = tmp_path / "models.toml"
    user.write_text(USER)
    from trompe_agents import models_cli

    monkeypatch.setattr(models_cli, "MODELS", catalogue.load(user)["models"])
    assert main(["models", "--vendor", "openai"]) == 0
    [nova] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("gpt-7-nova")]
    assert "unknown: --price MODEL=IN,OUT" in nova
    assert main(["models", "--json", "--service-tier", "flex"]) == 0
    rows = {r["model"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["gpt-6.1-terra"]["price"]["input"] == 0.5 and rows["gpt-7-nova"]["price"] is None
