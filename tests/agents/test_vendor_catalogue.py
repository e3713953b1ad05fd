"""The model catalogue as a data file: today's models, exact identity (no prefix), a user file on top, status
notices and refusals, `trompe models`."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime

import pytest
from trompe_agents.backends.gemini import GeminiSettings
from trompe_agents.backends import catalogue
from trompe_agents.backends.catalogue import BY_ID, DEFAULTS, MODELS, CatalogueError, ModelRefused, check_model, lookup
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
    """Each test sees the once-per-model notices and warnings afresh."""
    monkeypatch.setattr(catalogue, "_NOTED", set())
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


def test_a_routed_model_gets_one_clean_notice_naming_its_replacement_and_is_priced_as_it(capsys):
    [line] = check_model("gemini-3.5-flash", "gemini")
    assert re.match(r"gemini-3\.5-flash is routed: .* gemini-3\.6-flash", line)
    assert catalogue.notice(line) and not catalogue.notice(line)  # once
    assert capsys.readouterr().err == f"trompe: {line}\n"  # one line, no Python source path
    assert check_model("gemini-3.8-flash", "gemini") == []  # active: nothing to say
    usage = Usage(input_tokens=1000, output_tokens=100)
    assert cost(usage, "gemini-3.5-flash", PRICES) == cost(usage, "gemini-3.6-flash", PRICES)


def test_a_backend_refuses_its_retired_model_in_one_line_naming_the_replacement():
    from trompe_agents.backends.base import BackendOptions
    from trompe_agents.backends.gemini import GeminiBackend

    with pytest.raises(ModelRefused, match="gemini-2.5-pro is retired: .*--model gemini-3.1-pro-preview"):
        GeminiBackend(BackendOptions(model="gemini-2.5-pro", api_key="k"))
    unchecked = GeminiSettings(model_check=False)  # overridden
    GeminiBackend(BackendOptions(model="gemini-2.5-pro", api_key="k", settings=unchecked))


def test_a_backend_prints_a_routed_models_notice_as_one_clean_line_once(capsys, recwarn):
    from trompe_agents.backends.base import BackendOptions
    from trompe_agents.backends.gemini import GeminiBackend

    for _ in range(2):
        GeminiBackend(BackendOptions(model="gemini-3.5-flash", api_key="k"))
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("trompe: gemini-3.5-flash is routed: ") and ".py:" not in line
    # not as a Python warning too (a warning from elsewhere, e.g. an earlier test's socket collected here, may be)
    assert not [w for w in recwarn.list if "gemini-3.5-flash" in str(w.message)]


def test_a_shutdown_date_is_named_from_a_week_before_and_refused_from_that_day():
    """gpt-5-mini shuts down on 2026-12-11 (developers.openai.com/api/docs/deprecations)."""
    assert BY_ID["gpt-5-mini"].shutdown == date(2026, 12, 11)
    assert "shuts down" not in check_model("gpt-5-mini", "openai", today=date(2026, 12, 3))[0]
    [line] = check_model("gpt-5-mini", "openai", today=date(2026, 12, 4))
    assert "it shuts down on 2026-12-11; use --model gpt-6.1-terra" in line
    with pytest.raises(ModelRefused, match=r"gpt-5-mini is retired \(shut down on 2026-12-11\).*gpt-6\.1-terra"):
        check_model("gpt-5-mini", "openai", today=date(2026, 12, 11))
    assert BY_ID["gpt-4o"].replacement == "gpt-6-luna" and BY_ID["gpt-4o"].shutdown == date(2027, 1, 14)


@pytest.mark.parametrize("model, vendor, looks_like", [
    ("gemini-3.8-flash-lite", "gemini", "gemini-3.8-flash"),
    ("claude-sonnet-5-6", "anthropic", "claude-sonnet-5"),
    ("gpt-6.3-sol", "openai", "gpt-6.2-sol"),
    ("gpt-6.1-terra-mini", "openai", "gpt-6.1-terra"),
])
def test_a_next_month_id_is_unknown_not_its_look_alike(model, vendor, looks_like):
    """No prefix makes two models one: the new id runs on its vendor's defaults, unpriced, with one notice."""
    info = lookup(model, vendor)
    assert (info.status, info.price, info.id) == ("unknown", None, model)
    assert info.efforts == catalogue.VENDOR_DEFAULTS[vendor].efforts != () and info.thinking_off == ""
    assert pricing.price_of(model, PRICES) is None and pricing.price_of(looks_like, PRICES) is not None
    [line] = check_model(model, vendor)
    assert line.startswith(f"{model} is not in trompe's model catalogue nor in genai-prices: it runs with ")
    assert f"[vendors.{vendor}]" in line


def test_unlisted_genai_prices_models_are_priced_by_their_exact_id():
    for model, vendor in [("gemini-4-argon", "gemini"), ("gemini-3.7-flash", "gemini"),
                          ("claude-mythos-5-2", "anthropic"), ("claude-opus-4-5", "anthropic")]:
        info = lookup(model, vendor)
        assert info.status == "unlisted" and info.price is not None and pricing.price_of(model, PRICES) == info.price
        assert "priced by genai-prices" in check_model(model, vendor)[0]


@pytest.mark.parametrize("snapshot, model", [
    ("claude-sonnet-5-5-20261015", "claude-sonnet-5-5"), ("claude-sonnet-5-5@20261015", "claude-sonnet-5-5"),
    ("gpt-6.1-terra-2026-10-26", "gpt-6.1-terra"), ("gemini-2.5-flash-lite-001", "gemini-2.5-flash-lite"),
    ("models/gemini-3.8-flash", "gemini-3.8-flash")])
def test_a_dated_snapshot_in_its_vendors_form_is_its_model(snapshot, model):
    info = lookup(snapshot)
    assert info.id == snapshot and info.price == BY_ID[model].price and info.efforts == BY_ID[model].efforts
    assert lookup("gpt-6.1-terra-20261026").status == "unknown"  # an Anthropic-style date on an OpenAI id


@pytest.mark.parametrize("model, vendor, message", [
    ("claude-sonet-5", "anthropic", "did you mean claude-sonnet-5"),
    ("gemini-3.8-flsh", "gemini", "did you mean gemini-3.8-flash"),
    ("gpt-6.1-tera", "openai", "did you mean gpt-6.1-terra"),
    ("gpt-6.1-terra", "anthropic", "gpt-6.1-terra is OpenAI's, .*use --backend openai"),
    ("gemini-3.8-flash", "openai", "Google's, .*use --backend gemini"),
])
def test_a_typo_or_another_vendors_model_is_refused_with_a_did_you_mean(model, vendor, message):
    with pytest.raises(ModelRefused, match=message + r".*--backend-option model_check=false"):
        check_model(model, vendor)


def test_the_illusion_agent_refuses_a_typo_with_exit_2_before_any_request(tmp_path, monkeypatch, capsys):
    from PIL import Image
    from trompe_agents.illusion.cli import main as illusion_main
    from trompe_agents.testing import FakeVendor, final

    Image.new("RGB", (8, 8)).save(tmp_path / "q.png")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with FakeVendor("anthropic", [final('{"answer": "yes"}')]) as fake:
        argv = ["ask", "--backend", "claude", "--model", "claude-sonet-5", "--base-url", fake.base_url, "--no-tools",
                "--trace", str(tmp_path / "trace")]
        with pytest.raises(SystemExit) as stop:
            illusion_main([*argv, str(tmp_path / "q.png"), "Same?"])
        assert stop.value.code == 2 and fake.requests == []
        assert "did you mean claude-sonnet-5" in capsys.readouterr().err
        illusion_main([*argv, "--backend-option", "model_check=false", str(tmp_path / "q.png"), "Same?"])
        assert fake.requests[0].json["model"] == "claude-sonet-5"  # the override sends it as written


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


def genai_prices_chat_models() -> dict[str, str]:
    """Every model id genai-prices' own data prices per input and output token for the three vendors (read from its
    snapshot apart from trompe's catalogue), with its vendor. Google's list also holds Claude on Vertex (Anthropic's
    models) and Gemma (open weights: trompe runs them locally, `--backend hf`): the Gemini API's own are `gemini-`."""
    from genai_prices import data_snapshot

    vendor_of = {"anthropic": "anthropic", "openai": "openai", "google": "gemini"}
    found = {}
    for provider in data_snapshot.get_snapshot().providers:
        for model in provider.models if provider.id in vendor_of else ():
            price = model.get_prices(datetime.now(UTC))
            if price.input_mtok is not None and price.output_mtok is not None and (
                    provider.id != "google" or model.id.startswith("gemini-")):
                found[model.id] = vendor_of[provider.id]
    return found


def test_trompe_models_prices_every_model_genai_prices_knows_for_the_vendors(capsys):
    """Each chat model genai-prices prices is listed with a price; what it lists without a token price (embeddings,
    speech, moderation, Gemma) or under an id no API takes (`ft:` patterns, `gpt-4o:extended`) is not offered."""
    assert main(["models", "--json"]) == 0
    rows = {r["model"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    known = genai_prices_chat_models()
    sendable = {id: vendor for id, vendor in known.items() if re.fullmatch(r"[a-z0-9][a-z0-9.-]*[a-z0-9]", id)}
    assert len(sendable) >= 150 and {"ft:gpt-4o", "gpt-4o:extended"} <= known.keys() - sendable.keys()
    for id, vendor in sendable.items():
        assert rows[id]["vendor"] == vendor and rows[id]["status"] != "unknown" and rows[id]["price"]["input"] > 0, id
    assert all(row["price"] is not None for row in rows.values())  # nothing offered that trompe cannot bill
    assert not {"whisper-1", "tts-1", "text-embedding-3-small", "gemini-embedding-001", "gemma-4-31b-it"} & rows.keys()
    assert rows["gpt-6.2-sol"]["price"]["input"] > 0 and rows["gemini-4-argon"]["status"] == "unlisted"
    assert "gemini-3.8-flash-lite" not in rows and "claude-sonnet-5-6" not in rows  # no look-alike listed


def test_trompe_models_shows_batch_prices_for_every_vendor(capsys):
    """genai-prices' batch variants (`processing: batch`): half the standard rate on all three vendors today."""
    assert main(["models", "--json", "--service-tier", "batch"]) == 0
    rows = {r["model"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    for model in ("claude-sonnet-5-5", "gpt-6.1-terra", "gemini-3.8-flash"):
        assert rows[model]["price"]["input"] == pytest.approx(BY_ID[model].price.input / 2), model


def test_a_user_file_adds_next_months_model_by_naming_whose_rules_it_follows(tmp_path):
    """docs/vendors.md, "Next month's models": `like` copies a listed model's rules, never its status or price."""
    user = tmp_path / "models.toml"
    user.write_text('[models."claude-sonnet-5-6"]\nvendor = "anthropic"\nlike = "claude-sonnet-5-5"\n'
                    'price = {input = 2.0, output = 10.0}\nsource = "https://example.org/sonnet-5-6"\n')
    models = {m.id: m for m in catalogue.load(user)["models"]}
    new, old = models["claude-sonnet-5-6"], models["claude-sonnet-5-5"]
    assert (new.thinking_off, new.thinking_display, new.efforts) == (old.thinking_off, "summarized", old.efforts)
    assert new.price.input == 2.0 and new.source == "https://example.org/sonnet-5-6" and new.status == "active"
    user.write_text('[models."x"]\nvendor = "openai"\nlike = "gpt-9"\n')
    with pytest.raises(CatalogueError, match="models.x: like = 'gpt-9' names no other model"):
        catalogue.load(user)


@pytest.fixture
def newer_genai_prices(monkeypatch):
    """genai-prices' data as a newer release would ship it: today's, plus `gemini-3.8-flash-lite` at 0.25 / 1.50,
    installed through genai-prices' own `set_custom_snapshot` (what `UpdatePrices` does with fetched data)."""
    from dataclasses import replace as copy_with

    from genai_prices import data_snapshot, types

    today = data_snapshot.get_snapshot()
    google = next(p for p in today.providers if p.id == "google")
    flash = next(m for m in google.models if m.id == "gemini-3.8-flash")
    lite = copy_with(flash, id="gemini-3.8-flash-lite", name="Gemini 3.8 Flash-Lite", price_variants=None,
                     prices=types.ModelPrice(input_mtok=0.25, output_mtok=1.5, cache_read_mtok=0.025))
    providers = [copy_with(p, models=[*p.models, lite]) if p is google else p for p in today.providers]
    data_snapshot.set_custom_snapshot(data_snapshot.DataSnapshot(providers=providers, from_auto_update=True))
    for cached in (catalogue.market_models, catalogue.market_price):
        cached.cache_clear()
    yield
    data_snapshot.set_custom_snapshot(None)
    for cached in (catalogue.market_models, catalogue.market_price):
        cached.cache_clear()


def test_a_newer_genai_prices_prices_next_months_model_by_its_exact_id(newer_genai_prices):
    info = lookup("gemini-3.8-flash-lite", "gemini")
    assert info.status == "unlisted" and (info.price.input, info.price.output) == (0.25, 1.5)
    assert pricing.price_of("gemini-3.8-flash-lite", PRICES) == info.price
    assert "priced by genai-prices" in check_model("gemini-3.8-flash-lite", "gemini")[0]
    assert lookup("gemini-3.8-flash-lite-preview", "gemini").status == "unknown"  # still no prefix
