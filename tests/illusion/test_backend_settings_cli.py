"""`--backend-option` through the real command lines: a misspelt key or a value out of range ends the command with
status 2 and one line naming the flag and what is accepted; the run's fingerprint holds the parsed value; a folder an
older version wrote (values as typed: `temperature: 0`) resumes as the same run. The vendor is the loopback fake
Gemini API (ai.google.dev/api/generate-content: `generationConfig.temperature`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clikit import status
from trompe_kernel.exits import OK
from trompe_agents.illusion.cli import main
from trompe_agents.illusion.identity import run_key
from trompe_agents.illusion.report import write_report
from trompe_agents.illusion.results import RESULTS
from trompe_agents.illusion.runmeta import META
from trompe_agents.sevex.cli import main as sevex_main
from trompe_agents.testing import FakeVendor, final

ANSWER = '{"reasons": "measured", "answer": "yes"}'


pytestmark = pytest.mark.usefixtures("gemini_key")  # conftest.py: the fake Gemini API takes any key


def run(probe_dir: Path, out: Path, base_url: str, *options: str) -> int:
    return status(main, ["--backend", "gemini", "--base-url", base_url, "--max-retries", "0", *options, "run",
                         "--dataset", str(probe_dir), "--task", "1", "--out", str(out), "--no-progress",
                         "--concurrency", "1", "--limit", "2", "--router", "regex"])


@pytest.mark.parametrize("option, said", [
    ("temprature=0", "illusion-agent: --backend-option temprature: gemini has no such setting (did you mean "
                     "temperature?); it takes api_version, max_reply_bytes, model_check, native_final, temperature"),
    ("prompt_cache=false", "illusion-agent: --backend-option prompt_cache: gemini has no such setting; it takes "
                           "api_version, max_reply_bytes, model_check, native_final, temperature"),
    ("temperature=hot", "illusion-agent: --backend-option temperature=hot: expected a number from 0 to 2, or none "
                        "(send no temperature)"),
    ("max_reply_bytes=1e9", "illusion-agent: --backend-option max_reply_bytes=1e9: expected a whole number of "
                            "bytes >= 1024"),
    ("api_version=v9", "illusion-agent: --backend-option api_version=v9: expected v1beta, v1, v1alpha"),
])
def test_a_setting_the_backend_does_not_take_ends_the_command_naming_the_accepted_ones(probe_dir, tmp_path, capsys,
                                                                                       option, said):
    with FakeVendor("gemini", [final(ANSWER)]) as fake:
        assert run(probe_dir, tmp_path / "run", fake.base_url, "--backend-option", option) == 2
    assert fake.requests == []  # refused before any work
    assert capsys.readouterr().err.strip().splitlines()[-1] == said
    assert not (tmp_path / "run" / RESULTS).exists()


def test_sevex_names_the_role_flag(probe_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # the explorer (claude) is made first, and sends nothing
    argv = ["explore", "--task", "probes", "--dev", str(probe_dir), "--out", str(tmp_path / "x"),
            "--target-backend", "replay", "--target-backend-option", "casette=a.jsonl"]
    assert status(sevex_main, argv) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "sevex: --target-backend-option casette: replay has no such setting (did you mean cassette?); it takes "
        "cassette")


def test_the_fingerprint_holds_the_parsed_value_and_the_vendor_gets_it(probe_dir, tmp_path):
    out = tmp_path / "run"
    with FakeVendor("gemini", lambda body, n: final(ANSWER)) as fake:
        assert run(probe_dir, out, fake.base_url, "--backend-option", "temperature=0.30",
                   "--backend-option", "native_final=no") == OK
    assert {b["generationConfig"]["temperature"] for b in fake.bodies} == {0.3}
    options = json.loads((out / META).read_text())["fingerprint"]["settings"]["options"]
    assert options == {"native_final": False, "temperature": 0.3}
    assert isinstance(options["temperature"], float) and options["native_final"] is False  # not "0.30", "no"


def test_a_folder_an_older_version_wrote_resumes_as_the_same_run(probe_dir, tmp_path):
    """Before typed settings run.json kept a value as typed (`temperature: 0`, the default `native_final: true`);
    the same command today resumes it, and every line keeps the folder's run key, so report sees one run."""
    out = tmp_path / "run"
    with FakeVendor("gemini", lambda body, n: final(ANSWER)) as fake:
        assert run(probe_dir, out, fake.base_url, "--backend-option", "temperature=0") == OK
        meta = json.loads((out / META).read_text())
        meta["fingerprint"]["settings"]["options"] = {"native_final": True, "temperature": 0}  # as written then
        old_key = meta["run_key"] = run_key(meta["fingerprint"])
        (out / META).write_text(json.dumps(meta))
        first, _ = (out / RESULTS).read_text().splitlines()
        (out / RESULTS).write_text(json.dumps(json.loads(first) | {"run": old_key}) + "\n")  # one left to answer
        assert run(probe_dir, out, fake.base_url, "--backend-option", "temperature=0.0",
                   "--backend-option", "native_final=true") == OK
    assert [json.loads(line)["run"] for line in (out / RESULTS).read_text().splitlines()] == [old_key, old_key]
    assert json.loads((out / META).read_text())["run_key"] == old_key
    write_report(out)  # one run: no refusal


def test_an_older_folder_with_a_setting_no_longer_taken_is_refused_naming_it(probe_dir, tmp_path, capsys):
    """An older version accepted (and ignored) a misspelt key and recorded it; today the resume names it."""
    out = tmp_path / "run"
    with FakeVendor("gemini", lambda body, n: final(ANSWER)) as fake:
        assert run(probe_dir, out, fake.base_url) == OK
        meta = json.loads((out / META).read_text())
        meta["fingerprint"]["settings"]["options"] = {"temprature": 0.3}
        (out / META).write_text(json.dumps(meta))
        assert run(probe_dir, out, fake.base_url) == 2
    assert "holds another run: settings.options.temprature (0.3 -> null)" in capsys.readouterr().err


@pytest.mark.parametrize("flags, named", [
    (["--thinking", "high"], "settings.thinking (null -> high)"),
    (["--image-format", "jpeg"], "settings.image_format (auto -> jpeg)"),
    (["--keep-images", "1"], "settings.keep_images (null -> 1)"),
    (["--fallback-model", "gemini-3.7-flash"], "settings.fallback_models (+gemini-3.7-flash)"),
    (["--backend-option", "temperature=0.5"], "settings.options.temperature (null -> 0.5)"),
])
def test_a_rerun_with_another_sent_setting_is_refused_naming_it(probe_dir, tmp_path, capsys, flags, named):
    """The fingerprint is built by the command line's own settings builder: every setting that changes what the
    vendor is sent, left out of it, would let a resume mix two runs' answers in one folder."""
    out = tmp_path / "run"
    with FakeVendor("gemini", lambda body, n: final(ANSWER)) as fake:
        assert run(probe_dir, out, fake.base_url) == OK
        before = (out / RESULTS).read_text()
        assert run(probe_dir, out, fake.base_url, *flags) == 2
    assert named in capsys.readouterr().err
    assert (out / RESULTS).read_text() == before
