"""The command-line options apps share: building a backend and a tool client from flags."""

from __future__ import annotations

import argparse

import pytest

from trompe_agents.backends.function import FunctionBackend
from trompe_agents.backends.replay import Recorder
from trompe_agents.cliopts import (
    add_backend_args,
    add_rounds_args,
    add_server_args,
    backend_from_args,
    toolclient_from_args,
)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="illusion-agent")
    add_backend_args(parser)
    add_rounds_args(parser)
    add_server_args(parser)
    return parser.parse_args(argv)


def decide(messages, tools):
    return {"answer": "yes"}


def test_function_backend_with_recording(tmp_path):
    args = parse("--backend", "function", "--model", f"{__name__}:decide", "--record", str(tmp_path / "c.jsonl"),
                 "--max-rounds", "4")
    backend = backend_from_args(args)
    assert isinstance(backend, Recorder) and isinstance(backend.inner, FunctionBackend)
    assert args.max_rounds == 4 and args.max_retries == 4


def test_missing_api_key_is_one_line_naming_the_variable(monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(SystemExit) as exit_:
        backend_from_args(parse("--backend", "claude"))
    message = str(exit_.value)
    assert message.startswith("illusion-agent: ") or message.startswith("trompe: ")
    assert "\n" not in message and "ANTHROPIC_API_KEY" in message
    assert all(name in message for name in ("function", "replay", "hf"))


def test_api_key_env_that_is_unset_is_named(monkeypatch):
    monkeypatch.delenv("MY_KEY_VAR", raising=False)
    with pytest.raises(SystemExit, match="--api-key-env MY_KEY_VAR: that environment variable is not set"):
        backend_from_args(parse("--backend", "claude", "--api-key-env", "MY_KEY_VAR"))


def test_unknown_backend_lists_the_available_ones():
    with pytest.raises(SystemExit, match="unknown backend 'gpt9'; available: .*function"):
        backend_from_args(parse("--backend", "gpt9"))


@pytest.mark.parametrize("flag", ["--max-rounds", "--max-retries"])
def test_bad_numbers_are_refused_with_the_range(flag, capsys):
    with pytest.raises(SystemExit):
        parse(flag, "-1")
    assert f"argument {flag}: expected an integer >=" in capsys.readouterr().err


async def test_server_flags_choose_the_transport():
    assert toolclient_from_args(parse("--server-url", "http://127.0.0.1:9/mcp")).label == "http://127.0.0.1:9/mcp"
    assert toolclient_from_args(parse("--server-cmd", "trompe-server --tools core")).label == \
        "trompe-server --tools core"
    local = toolclient_from_args(parse("--tools", "analysis"))
    async with local as tools:
        offered = {t.name for t in await tools.list_tools()}
        assert local.label == "in-process"
        assert {"sample_color", "list_images", "view_image"} <= offered and "crop" not in offered


async def test_backend_options_from_the_command_line_reach_the_vendor_request():
    from trompe_agents.messages import Message, TextPart
    from trompe_agents.testing import FakeVendor, final

    with FakeVendor("anthropic", [final("ok")]) as fake:
        args = parse("--backend", "claude", "--base-url", fake.base_url, "--api-key-env", "PATH",
                     "--backend-option", "temperature=null", "--backend-option", "anthropic_version=2023-06-01",
                     "--retry-cap", "7.5")
        backend = backend_from_args(args)
        turn = await backend.complete([Message("user", [TextPart("hi")])], [])
        await backend.aclose()
    request = fake.requests[0]
    assert "temperature" not in request.json and request.headers["anthropic-version"] == "2023-06-01"
    assert turn.sent["temperature_via"] == "not sent"


def test_backend_option_must_be_key_value():
    with pytest.raises(SystemExit):
        parse("--backend-option", "no-equals-sign")
    assert parse("--backend-option", "native_final=false").backend_option == [("native_final", "false")]
