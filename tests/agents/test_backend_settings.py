"""Each backend's settings are declared: docs/vendors.md lists exactly what the code declares, a value from Python is
checked as one from the command line is, a backend gets only its own settings class, and a third-party backend
declares its settings the same way and is held to them through the real command line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clikit import status
from distkit import install_module
from trompe_agents import plugins
from trompe_agents.backends.base import BackendOptions
from trompe_agents.backends.claude import ClaudeSettings
from trompe_agents.backends.gemini import GeminiSettings
from trompe_agents.backends.settings import PER_MODEL, BackendSettings, SettingError, settings_table
from trompe_agents.illusion.cli import main

ROOT = Path(__file__).resolve().parents[2]
TABLE = re.compile(r"<!-- backend settings: [^\n]*-->\n(.*?)<!-- end backend settings -->", re.S)

PLUGIN = '''from dataclasses import dataclass

from trompe_agents.backends.settings import BackendSettings, number, setting, text
from trompe_kernel import hookimpl


@dataclass(frozen=True)
class AcmeSettings(BackendSettings):
    speed: float = setting(1.0, number(0.5, 4), "how fast the model reads")
    voice: str = setting("calm", text(("calm", "loud")), "how it answers")


made = []


@hookimpl
def register_backends(register):
    register("acme", lambda options: made.append(AcmeSettings.of(options)) or made[-1], settings=AcmeSettings)
    register("bare", lambda options: None)
'''


def test_the_vendors_page_lists_every_backends_settings_as_the_code_declares_them():
    classes = {name: entry.settings for name, entry in plugins.backend_entries().items()}
    assert set(classes) >= {"claude", "openai", "openai-chat", "gemini", "hf", "function", "replay"}
    written = TABLE.search((ROOT / "docs" / "vendors.md").read_text(encoding="utf-8"))
    assert written, "docs/vendors.md lost its backend settings table"
    assert written.group(1) == settings_table(classes), "regenerate the table with backends.settings.settings_table"


def test_a_value_from_python_is_checked_and_typed_as_one_from_the_command_line():
    assert ClaudeSettings(temperature=0).temperature == 0.0 and isinstance(ClaudeSettings(temperature=0).temperature,
                                                                            float)
    assert ClaudeSettings().temperature is PER_MODEL and ClaudeSettings().changed() == {}
    assert ClaudeSettings(temperature="none").changed() == {"temperature": None}  # none: send no temperature
    with pytest.raises(SettingError, match=r"^batch_window=-1: expected a number of seconds >= 0$"):
        ClaudeSettings(batch_window=-1)
    with pytest.raises(SettingError, match=r"^anthropic_version=2023: expected a date YYYY-MM-DD$"):
        ClaudeSettings.from_pairs([("anthropic_version", "2023")])
    assert ClaudeSettings.from_pairs([("native_final", "off"), ("native_final", "on")]).native_final is True  # last


def test_a_backend_gets_only_its_own_settings_class():
    with pytest.raises(SettingError, match="expected ClaudeSettings settings, got GeminiSettings"):
        plugins.create_backend("claude", BackendOptions(api_key="k", settings=GeminiSettings()))


def install(site: Path) -> None:
    """A distribution whose entry point registers two backends (distkit)."""
    install_module(site, "acme-models", "acme", PLUGIN)


def ask(image: Path, backend: str, *options: str) -> int:
    argv = ["--backend", backend, *[a for o in options for a in ("--backend-option", o)], "ask", str(image), "?"]
    return status(main, argv)


def test_a_third_party_backend_declares_its_settings_and_the_command_line_holds_it_to_them(fresh_plugins, capsys,
                                                                                         question_png):
    install(fresh_plugins)
    assert ask(question_png, "acme", "sped=2") == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "illusion-agent: --backend-option sped: acme has no such setting (did you mean speed?); it takes speed, voice")
    assert ask(question_png, "acme", "voice=shrill") == 2
    assert capsys.readouterr().err.strip().endswith("--backend-option voice=shrill: expected calm, loud")
    assert ask(question_png, "bare", "speed=2") == 2  # registered without settings=: takes none
    assert capsys.readouterr().err.strip().endswith("--backend-option speed: bare has no such setting; it takes none")
    settings = plugins.backend_settings("acme", [("speed", "2"), ("voice", "loud")])
    plugins.create_backend("acme", BackendOptions(settings=settings))
    import acme_models_plugin

    assert acme_models_plugin.made == [settings] and acme_models_plugin.made[0].speed == 2.0
    assert plugins.backend_entry("bare").settings is BackendSettings
