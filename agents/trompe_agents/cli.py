"""The `trompe` command tree: `trompe serve`, `trompe illusion`, `trompe sevex` and the smaller subcommands,
each registered through the `register_commands` hook, the built-ins too.

The three applications are also installed as commands of their own (`trompe-server`, `illusion-agent`, `sevex`:
pyproject.toml [project.scripts]); each alias and its subcommand are built by the same `add_arguments` and run by
the same `execute`, so they take the same options, print the same lines and exit with the same statuses.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from trompe_kernel.exits import INTERRUPTED, OK, USAGE
from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins
from trompe_kernel.version import __version__
from trompe_server.commandline import entry_point, parse

# subcommand -> (the module with its `DESCRIPTION`, `add_arguments(parser)` and `execute(args)`, one line of help).
# A module is imported only when its subcommand runs (or the whole tree is built), so `trompe --help` and
# `trompe models` do not wait for the MCP client and the agents.
APPLICATIONS = {
    "serve": ("trompe_server.cli", "serve the image tools over stdio or streamable HTTP (also: trompe-server)"),
    "illusion": ("trompe_agents.illusion.cli", "ask, run a dataset, report, score, compare, submit: the illusion "
                                               "agent (also: illusion-agent)"),
    "sevex": ("trompe_agents.sevex.cli", "explore visual prompts, apply the best one, show a run (also: sevex)"),
}
# The other built-in subcommands: name -> the module whose `register(subparsers)` adds it (imported when the parser
# is built; trompe.importlog imports inspect_ai only when run).
BUILT_IN = {"probes": "trompe_agents.probes.cli", "dataset": "trompe_agents.datasets.cli",
            "models": "trompe_agents.models_cli", "import-inspect": "trompe.importlog"}


def _adder(module: str) -> Callable[[argparse._SubParsersAction], None]:
    return lambda subparsers: importlib.import_module(module).register(subparsers)


def _application(name: str) -> Callable[[argparse._SubParsersAction], None]:
    """Adds the application's whole parser under `name`, built by the function that builds its alias."""
    module, summary = APPLICATIONS[name]

    def add(subparsers: argparse._SubParsersAction) -> None:
        app = importlib.import_module(module)
        parser = subparsers.add_parser(name, help=summary, description=app.DESCRIPTION)
        app.add_arguments(parser)
        parser.set_defaults(func=lambda args: _execute(app, args))

    return add


def _execute(app: ModuleType, args: argparse.Namespace) -> int | None:
    args.argv = args.argv[1:]  # the words after the subcommand: what its alias is given (`--preset` re-reads them)
    return app.execute(args)


@hookimpl
def register_commands(register):
    """The built-in subcommands, registered as a plugin's are."""
    for name in APPLICATIONS:
        register(name, _application(name))
    for name, module in BUILT_IN.items():
        register(name, _adder(module))


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole tree; given the command line, an application it does not run is only listed with its help."""
    parser = argparse.ArgumentParser(prog="trompe", description="Tool-guided visual reasoning with VLMs.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((word for word in argv if not word.startswith("-")), None) if argv is not None else None
    for name, add in default_plugins().registry("register_commands", "command").items():
        if argv is not None and name in APPLICATIONS and name != chosen:
            subparsers.add_parser(name, help=APPLICATIONS[name][1])  # never parsed: the command line runs another
        else:
            add(subparsers)
    return parser


@entry_point
def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; bad input is one clear line and status 2, Ctrl-C status 130 (trompe_kernel/exits.py)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(build_parser(argv), argv)
    args.argv = argv
    try:
        return args.func(args) or OK
    except (ValueError, FileNotFoundError) as err:  # includes DatasetError: messages name the argument or file
        print(f"trompe: error: {err}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        print("trompe: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
