"""The `trompe` command: each subcommand is registered through the `register_commands` hook, the built-ins too."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from trompe_server.exits import INTERRUPTED, OK, USAGE
from trompe_server.version import __version__

from .hookspecs import hookimpl
from .plugins import registered

# The built-in subcommands: name -> the module whose `register(subparsers)` adds it (imported when the parser is
# built; trompe.importlog imports inspect_ai only when run).
BUILT_IN = {"probes": "trompe_agents.probes.cli", "dataset": "trompe_agents.datasets.cli",
            "models": "trompe_agents.models_cli", "import-inspect": "trompe.importlog"}


def _adder(module: str) -> Callable[[argparse._SubParsersAction], None]:
    return lambda subparsers: importlib.import_module(module).register(subparsers)


@hookimpl
def register_commands(register):
    """The built-in subcommands, registered as a plugin's are."""
    for name, module in BUILT_IN.items():
        register(name, _adder(module))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trompe", description="Tool-guided visual reasoning with VLMs.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in registered("register_commands", "command", sys.modules[__name__], "commands").values():
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; bad input is one clear line and status 2, Ctrl-C status 130 (trompe_server/exits.py)."""
    parser = build_parser()
    args = parser.parse_args(argv)
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
