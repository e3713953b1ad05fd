"""One `trompe` command tree: `trompe serve`, `trompe illusion` and `trompe sevex` take the options of their
aliases (`trompe-server`, `illusion-agent`, `sevex`), print the same lines and exit with the same statuses; a
plugin adds a subcommand through the commands hook, and a command line loads only the application it runs."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest
from trompe_kernel import hookimpl
from trompe_kernel.errors import PluginConflict
from trompe_kernel.manager import default_plugins

from trompe_agents import cli as trompe_cli
from trompe_agents.illusion import cli as illusion_cli
from trompe_agents.probes import generate
from trompe_agents.sevex import cli as sevex_cli
from trompe_server import cli as server_cli

from clikit import commands, parsers, status

ALIASES = {"trompe-server": ("serve", server_cli), "illusion-agent": ("illusion", illusion_cli),
           "sevex": ("sevex", sevex_cli)}
SCRIPTED = ["--backend", "function", "--model", "scripted:line_then_yes"]


def options(parser: argparse.ArgumentParser) -> dict[str, dict[str, tuple]]:
    """Every subcommand of a parser by its words below it: each option string with what argparse does with it."""
    return {words: {s: (a.dest, a.default, a.nargs, a.required, tuple(a.choices or ()), a.help)
                    for a in each._actions for s in a.option_strings} for words, each in parsers(parser, "")}


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_each_subtree_takes_exactly_its_aliases_options(alias):
    name, module = ALIASES[alias]
    subtree = dict(parsers(trompe_cli.build_parser(), "trompe"))[f"trompe {name}"]
    assert options(subtree) == options(module.build_parser())
    assert len(options(subtree)) > (1 if name != "serve" else 0)  # the subcommands are there too


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_help_is_the_aliases_under_the_subcommands_name(alias, capsys):
    name, module = ALIASES[alias]
    assert status(module.main, ["--help"]) == 0
    own = capsys.readouterr().out
    assert status(trompe_cli.main, [name, "--help"]) == 0
    sub = capsys.readouterr().out
    assert own.split("\n\n")[1:] == sub.split("\n\n")[1:]  # all but the usage lines, which wrap at the name
    assert sub.startswith(f"usage: trompe {name} ")


# Command lines each alias refuses: by argparse (a bad value), or by the command itself.
ERRORS = [
    ("illusion-agent", ["--max-retries", "-1", "ask", "x.png", "Q?"]),
    ("illusion-agent", [*SCRIPTED, "ask", "missing.png", "Q?"]),
    ("illusion-agent", ["run", "--dataset", "missing.jsonl", "--out", "run", *SCRIPTED, "--no-progress"]),
    ("illusion-agent", ["route"]),
    ("sevex", ["apply", "src", "--dataset", "d", "--target-keep-images", "0"]),
    ("sevex", ["explore", "--out", "run"]),
    ("sevex", ["show", "run"]),
    ("trompe-server", ["--http", "--port", "70000"]),
    ("trompe-server", ["--root", "missing", "--list-tools"]),
]


@pytest.mark.parametrize(("alias", "argv"), ERRORS, ids=[f"{a} {' '.join(v)}" for a, v in ERRORS])
def test_an_error_exits_alike_through_the_alias_and_the_subtree(alias, argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.png").write_bytes(b"")
    name, module = ALIASES[alias]
    own = status(module.main, argv), capsys.readouterr()
    sub = status(trompe_cli.main, [name, *argv]), capsys.readouterr()
    assert own[0] == sub[0] == 2
    assert own[1].out == sub[1].out == ""
    said = own[1].err.strip().splitlines()[-1]
    assert said and "Traceback" not in own[1].err
    # argparse names the command it parsed for ("trompe illusion: error: ..."); the commands' own lines are equal
    expected = said.replace(alias, f"trompe {name}", 1) if ": error: argument" in said else said
    assert sub[1].err.strip().splitlines()[-1] == expected


def test_a_run_through_the_tree_prints_and_records_what_the_alias_does(tmp_path, models_on_path, capsys):
    models_on_path(Path(__file__).parents[1] / "illusion")  # scripted.py: the function model
    probes = tmp_path / "probes"
    generate("illusions", families=["ebbinghaus", "hering"], n=4, seed=3, size=96, out=probes, progress=False)
    printed = {}
    for words in (["illusion-agent"], ["trompe", "illusion"]):
        out = tmp_path / words[-1]
        argv = ["run", "--dataset", str(probes), "--task", "1", "--out", str(out), "--no-progress", *SCRIPTED]
        main = illusion_cli.main if words == ["illusion-agent"] else trompe_cli.main
        assert status(main, [*words[1:], *argv]) == 0
        printed[words[-1]] = capsys.readouterr().out.replace(str(out), "OUT")
        command = json.loads((out / "run.json").read_text())["invocations"][-1]["command"]
        assert command == [*words, *argv]  # the command as typed
    assert printed["illusion-agent"] == printed["illusion"] and "4 results" in printed["illusion"]


def plugin_command(name: str) -> None:
    """A plugin named 'twin' whose command `name` prints the words it was given."""
    class Twin:
        @hookimpl
        def register_commands(self, register):
            register(name, lambda subparsers: subparsers.add_parser(name).set_defaults(
                func=lambda args: print(f"{name} {args.argv}") or 3))

    default_plugins().register(Twin(), name="twin")


def test_a_plugin_adds_a_subcommand_beside_the_applications(fresh_plugins, capsys):
    plugin_command("hello")
    assert trompe_cli.main(["hello"]) == 3 and capsys.readouterr().out == "hello ['hello']\n"
    subcommands = {path.split()[1] for path in commands(trompe_cli.build_parser(), "trompe") if " " in path}
    assert {"hello", "serve", "illusion", "sevex", "models", "probes"} <= subcommands


def test_a_plugin_cannot_take_an_applications_name(fresh_plugins):
    plugin_command("serve")
    with pytest.raises(PluginConflict, match="command 'serve' is registered by both plugin 'commands' and plugin "
                                             "'twin'"):
        trompe_cli.build_parser(["models"])


def test_a_command_line_loads_only_the_application_it_runs():
    """`trompe models` and `trompe --help` run, and list serve, illusion and sevex without importing them (nor the MCP
    client they stand on), so they start as fast as before the tree had them."""
    probe = ("import contextlib, io, sys\nfrom trompe_agents.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
             "    main(['models'])\n"
             "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
             "print(sorted(m for m in ('trompe_server.cli', 'trompe_agents.illusion.cli', 'trompe_agents.sevex.cli',"
             " 'mcp') if m in sys.modules), all(n in out.getvalue() for n in ('serve', 'illusion', 'sevex')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["[]", "True"]


def test_help_of_every_illusion_and_sevex_command_starts_without_the_mcp_client_or_the_price_data():
    """Only a connection needs the MCP SDK (0.4-0.7 s of imports), and only a bill needs genai-prices' data
    (0.2 s): `illusion-agent report --help`, or any other command's help, prints without either."""
    probe = ("import contextlib, io, sys\nfrom trompe_agents.illusion.cli import main as illusion, build_parser\n"
             "from trompe_agents.sevex.cli import main as sevex\n"
             "lines = []\n"
             "for main, words in [(illusion, []), (sevex, []), *[(illusion, [c]) for c in "
             "build_parser()._subparsers._group_actions[0].choices]]:\n"
             "    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):\n"
             "        main([*words, '--help'])\n"
             "    lines.append(f\"{' '.join(words) or '-'} {'usage:' in out.getvalue()} {'mcp' in sys.modules} \"\n"
             "                 f\"{'genai_prices' in sys.modules}\")\n"
             "print('\\n'.join(lines))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    rows = done.stdout.splitlines()
    assert len(rows) >= 2 + 8 and {row.split()[0] for row in rows} >= {"-", "run", "report", "compare"}
    assert [row for row in rows if not row.endswith(" True False False")] == []
