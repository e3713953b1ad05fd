"""Helpers for tests of the command lines: the exit status a shell sees, and every (sub)command of a parser."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator


def status(main: Callable, argv: list[str]) -> int:
    """The exit status a shell would see."""
    try:
        return main(argv) or 0
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1


def parsers(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The parser of every command and subcommand, each with its words (`path` for the top one)."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, f"{path} {name}".strip())


def commands(parser: argparse.ArgumentParser, path: str) -> dict[str, set[str]]:
    """Every command and subcommand of a parser, with the option strings it accepts."""
    return {words: {s for a in each._actions for s in a.option_strings} for words, each in parsers(parser, path)}
