"""The command lines behave as the shell tools people use do: a reader that stops early ends a command quietly,
every command and subcommand answers --version, a mistyped option is named with the one meant, a --task that
contradicts the answers is said, a finished run says there is nothing left to do, --json means stdout.

Through the real entry points: the installed console scripts as subprocesses, or each alias's main(argv)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trompe_agents import cli as trompe_cli
from trompe_agents.illusion.cli import main as illusion_agent
from trompe_server.commandline import entry_point
from trompe_kernel.version import __version__

from clikit import parsers, status

MODEL = ["--backend", "function", "--model", "mymodel:decide"]


def scripts_env(tmp_path: Path) -> dict[str, str]:
    """No keys; the console scripts of this interpreter first; the user's model module importable."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    (tmp_path / "mymodel.py").write_text('def decide(messages, tools):\n    return {"reasons": "r", "answer": "yes"}\n')
    return env


def into_closed_pipe(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run a command whose stdout is a pipe nobody reads any more (`| head` after its lines): every write fails."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(argv, cwd=cwd, env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=240,
                              stdin=subprocess.DEVNULL)
    finally:
        os.close(write)


@pytest.fixture
def two_runs(probe_dir, tmp_path):
    """A run of the README's offline model and its --no-tools baseline, on eight probes."""
    env = scripts_env(tmp_path)
    for name, extra in (("a", []), ("b", ["--no-tools"])):
        done = subprocess.run(["illusion-agent", *MODEL, "run", "--dataset", str(probe_dir), "--out", f"runs/{name}",
                               "--no-progress", *extra], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=240, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr[-2000:]
    return tmp_path / "runs"


def test_each_entry_point_ends_quietly_with_status_0_when_its_reader_has_gone(two_runs, tmp_path):
    env = scripts_env(tmp_path)
    commands = [["trompe", "models"], ["trompe", "probes", "list"], ["trompe-server", "--list-tools"],
                ["illusion-agent", "compare", "runs/a", "runs/b"], ["illusion-agent", "report", "runs/a", "--json"],
                ["trompe", "illusion", "trace", "show", "runs/a"], ["sevex", "--version"]]
    for argv in commands:
        done = into_closed_pipe(argv, tmp_path, env)
        assert (done.returncode, done.stderr) == (0, ""), (argv, done.stderr[-2000:])


def test_a_broken_pipe_that_is_not_stdout_is_still_an_error():
    """Only the reader of stdout going away is the user's choice; a dead subprocess's pipe is a failure."""

    @entry_point
    def command(argv):
        raise BrokenPipeError("the server subprocess went away")

    with pytest.raises(BrokenPipeError):
        command([])


def every_command() -> list[list[str]]:
    """The words of every command and subcommand of the `trompe` tree (the applications' whole trees too)."""
    return [words.split()[1:] for words, _ in parsers(trompe_cli.build_parser(), "trompe")]


@pytest.mark.parametrize("words", every_command(), ids=lambda words: " ".join(["trompe", *words]))
def test_every_command_and_subcommand_answers_version(words, capsys):
    assert status(trompe_cli.main, [*words, "--version"]) == 0
    assert capsys.readouterr().out == f"{' '.join(['trompe', *words])} {__version__}\n"


MISTYPED = [(["illusion", "run", "--datset", "probes", "--out", "run"], "trompe illusion run", "--datset", "--dataset"),
            (["sevex", "explore", "--iteratons", "0", "--out", "run"], "trompe sevex explore", "--iteratons",
             "--iterations"),
            (["serve", "--list-tols"], "trompe serve", "--list-tols", "--list-tools"),
            (["models", "--jsn"], "trompe models", "--jsn", "--json"),
            (["illusion", "report", "runs/x", "--jsno"], "trompe illusion report", "--jsno", "--json"),
            (["probes", "list", "--siute", "x"], "trompe probes list", "--siute", "--suite"),
            (["dataset", "--hlp"], "trompe dataset", "--hlp", "--help")]


@pytest.mark.parametrize(("argv", "prog", "typo", "meant"), MISTYPED, ids=lambda value: str(value))
def test_a_mistyped_option_is_named_with_the_one_meant_and_exits_2(argv, prog, typo, meant, capsys):
    assert status(trompe_cli.main, argv) == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == f"{prog}: error: unrecognized option {typo} (did you mean {meant}?)"


ELSEWHERE = [  # an option valid on another subcommand, or before this one: named on this subcommand, with the fix
    (["report", "runs/x", "--limit", "3"],
     "illusion-agent report: error: unrecognized option --limit (illusion-agent run takes it); "
     "`illusion-agent report --help` lists the options it takes"),
    (["report", "runs/x", "--output", "x"],
     "illusion-agent report: error: unrecognized option --output (illusion-agent score, illusion-agent submit take "
     "it); `illusion-agent report --help` lists the options it takes"),
    (["report", "runs/x", "--outptu", "x"],  # `report` has no --output to suggest
     "illusion-agent report: error: unrecognized option --outptu; `illusion-agent report --help` lists the options "
     "it takes"),
    (["report", "runs/x", "--backend", "function"],
     "illusion-agent report: error: unrecognized option --backend: it is an option of illusion-agent, so it goes "
     "before `report`"),
    (["--mdel", "x", "report", "runs/x"], "illusion-agent: error: unrecognized option --mdel (did you mean --model?)"),
]


@pytest.mark.parametrize(("argv", "said"), ELSEWHERE, ids=lambda value: str(value))
def test_an_option_of_another_subcommand_is_refused_on_the_one_given_with_the_fix(argv, said, capsys):
    assert status(illusion_agent, argv) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == said


def test_an_option_value_that_names_a_subcommand_is_not_read_as_one(capsys):
    """`--model report` is the model's name: `run`'s options still apply after it."""
    assert status(illusion_agent, ["--model", "report", "run", "--datset", "p", "--out", "r"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "illusion-agent run: error: unrecognized option --datset (did you mean --dataset?)")


def test_every_entry_point_names_its_unknown_options(capsys):
    """trompe-server and sevex parse through the same guard as trompe and illusion-agent."""
    from trompe_agents.sevex.cli import main as sevex
    from trompe_server.cli import main as trompe_server

    assert status(trompe_server, ["--list-tols"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "trompe-server: error: unrecognized option --list-tols (did you mean --list-tools?)")
    assert status(sevex, ["explore", "--limit", "3"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(
        "sevex explore: error: unrecognized option --limit")


def test_the_alias_names_a_mistyped_option_before_a_missing_required_one(capsys):
    assert status(illusion_agent, ["run", "--datset", "probes", "--out", "run"]) == 2
    assert capsys.readouterr().err.strip().endswith("unrecognized option --datset (did you mean --dataset?)")


def test_a_task_against_the_answers_is_said_and_a_finished_run_has_nothing_left_to_do(probe_dir, tmp_path,
                                                                                      capsys):
    env = scripts_env(tmp_path)
    argv = ["illusion-agent", *MODEL, "run", "--dataset", str(probe_dir), "--out", "run", "--no-progress",
            "--task", "2", "--limit", "2"]
    first = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
                           stdin=subprocess.DEVNULL)
    assert first.returncode in (0, 3), first.stderr[-2000:]
    assert (f"illusion-agent run: warning: --task 2: every answer is yes/no in {probe_dir}, which is Task 1's form"
            in first.stderr)
    assert "nothing left to do" not in first.stderr
    again = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
                           stdin=subprocess.DEVNULL)
    assert again.returncode == first.returncode
    assert f"nothing left to do: all 2 samples are in {Path('run') / 'results.jsonl'}" in again.stderr


def test_json_means_stdout_and_output_means_a_file(two_runs, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for command in (["report", "runs/a"], ["score", "runs/a"], ["compare", "runs/a", "runs/b"]):
        assert illusion_agent([*command, "--json"]) == 0
        assert isinstance(json.loads(capsys.readouterr().out), dict), command  # stdout is the JSON alone
    assert illusion_agent(["score", "runs/a", "--output", "figures.json"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "json: figures.json"
    assert json.loads((tmp_path / "figures.json").read_text())["counts"]["records"] == 8
