"""One exit-code policy (trompe_kernel/exits.py): a wrong command line is status 2 in every command, whether
argparse or the command finds it, and a failure while working is 1. (128 + N on a signal N is checked with real
processes in tests/illusion/test_sigterm.py and tests/sevex/test_interrupt.py; 1 for a busy run folder in
tests/illusion/test_lock.py.)"""

from __future__ import annotations


import pytest

from trompe_agents.cli import main as trompe_main
from trompe_agents.illusion.cli import main as illusion_main
from trompe_agents.sevex.cli import main as sevex_main
from trompe_server.cli import main as server_main
from trompe_kernel.exits import USAGE

from clikit import status

FUNCTION = ["--backend", "function", "--model", "scripted:line_then_yes"]


CASES = {
    # a value argparse refuses
    "illusion-agent --max-retries": (illusion_main, ["--max-retries", "-1", "ask", "x.png", "Q?"], "--max-retries"),
    "illusion-agent --timeout": (illusion_main, ["--timeout", "0", "ask", "x.png", "Q?"], "--timeout"),
    "sevex --target-keep-images": (sevex_main, ["apply", "src", "--dataset", "d", "--target-keep-images", "0"],
                                   "--target-keep-images"),
    "sevex --max-retries": (sevex_main, ["apply", "src", "--dataset", "d", "--max-retries", "x"], "--max-retries"),
    "trompe --suite": (trompe_main, ["probes", "generate", "--suite", "nope", "--out", "o"], "--suite"),
    "trompe-server --port": (server_main, ["--http", "--port", "70000"], "--port"),
    # a value the command itself refuses (these were status 1 in illusion-agent, sevex and trompe-server)
    "illusion-agent missing image": (illusion_main, [*FUNCTION, "ask", "missing.png", "Q?"], "no such file"),
    "illusion-agent unknown backend": (illusion_main, ["--backend", "gpt9", "ask", "x.png", "Q?"], None),
    "sevex no task": (sevex_main, ["explore", "--out", "OUT"], "--task and --dev are required"),
    "sevex no run": (sevex_main, ["show", "OUT"], "holds no run"),
    "trompe missing dataset": (trompe_main, ["dataset", "info", "missing.jsonl"], "not found"),
    "trompe-server missing root": (server_main, ["--root", "missing", "--list-tools"], "--root"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_wrong_command_line_is_status_2_in_every_command(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.png").write_bytes(b"")
    main, argv, said = CASES[case]
    argv = [str(tmp_path / "run") if a == "OUT" else a for a in argv]
    assert status(main, argv) == USAGE
    err = capsys.readouterr().err
    assert err.strip() and "Traceback" not in err
    assert said is None or said in err


def test_a_missing_api_key_is_a_usage_error_naming_the_variable(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    (tmp_path / "x.png").write_bytes(b"")
    argv = ["--backend", "claude", "--api-key-env", "NO_SUCH_KEY_VAR", "ask", str(tmp_path / "x.png"), "Q?"]
    assert status(illusion_main, argv) == USAGE
    assert "--api-key-env NO_SUCH_KEY_VAR: that environment variable is not set" in capsys.readouterr().err
