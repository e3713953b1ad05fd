"""The `trompe` command: each area adds its subcommands through a `register(subparsers)` function."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules whose `register(subparsers)` adds a subcommand; append yours here.
COMMANDS = ["trompe_agents.probes.cli", "trompe_agents.datasets.cli"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trompe", description="Tool-guided visual reasoning with VLMs.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; bad input is reported as one clear line and exit status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except ValueError as err:  # includes DatasetError: messages name the argument or file
        print(f"trompe: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
