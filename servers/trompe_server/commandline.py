"""What every trompe command line does the way shell tools do, in one place for the four entry points.

A reader that stops early (`trompe models | head -1`) ends the command quietly with status 0; every command and
subcommand answers `--version`; an option no command knows is named with the nearest one it may have meant
(`--datset`: "did you mean --dataset?"), status 2, before argparse would report only a missing required option.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import os
import select
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from trompe_kernel.exits import OK
from trompe_kernel.version import __version__

Main = TypeVar("Main", bound=Callable[..., object])


def entry_point(main: Main) -> Main:
    """Wrap a command's `main`: a closed stdout (the reader of a pipe went away) ends it quietly with status 0.

    Any other broken pipe (a server subprocess, a socket) is still the error it is."""

    @functools.wraps(main)
    def run(*args, **kwargs):
        try:
            status = main(*args, **kwargs)
            sys.stdout.flush()  # what is still buffered fails here, inside the guard, not at interpreter exit
            return status
        except BrokenPipeError:
            if not stdout_reader_gone():
                raise
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the flush at exit is quiet too
            return OK

    return run  # type: ignore[return-value]


def stdout_reader_gone() -> bool:
    """Whether stdout is a pipe or socket whose reading end is closed (poll reports an error or hang-up on it)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # replaced by a test's capture, or already closed
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse a command line after giving every subcommand `--version` and naming any unknown option first."""
    argv = list(sys.argv[1:] if argv is None else argv)
    add_version(parser)
    refuse_unknown_options(parser, argv)
    return parser.parse_args(argv)


def add_version(parser: argparse.ArgumentParser) -> None:
    """`--version` on the command and each of its subcommands (`trompe probes --version`: 'trompe probes 0.1.0')."""
    for _, each in subcommands(parser):
        if "--version" not in each._option_string_actions:
            each.add_argument("--version", action="version", version=f"%(prog)s {__version__}")


def refuse_unknown_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """End with status 2 on an `--option` that no command of the tree takes, with the nearest one it may mean.

    Known is any option (or a prefix argparse would accept) of any subcommand, so nothing valid is refused here;
    the suggestion comes from the subcommand the command line names, else from the whole tree."""
    every = {option for _, each in subcommands(parser) for option in each._option_string_actions}
    for word in argv:
        if word == "--":
            break
        name = word.split("=", 1)[0]
        if not name.startswith("--") or any(option.startswith(name) for option in every if option.startswith("--")):
            continue
        chosen = chosen_parser(parser, argv)
        near = (difflib.get_close_matches(name, _long_options(chosen), n=1, cutoff=0.6)
                or difflib.get_close_matches(name, sorted(every), n=1, cutoff=0.6))
        hint = f" (did you mean {near[0]}?)" if near else f"; `{chosen.prog} --help` lists the options"
        chosen.error(f"unrecognized option {name}{hint}")


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(option for option in parser._option_string_actions if option.startswith("--"))


def chosen_parser(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The deepest subcommand the command line's words name (`illusion-agent run ...`: the `run` parser)."""
    for word in argv:
        choices = next((action.choices for action in parser._actions
                        if isinstance(action, argparse._SubParsersAction)), {})
        if word in choices:
            parser = choices[word]
    return parser


def subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The parser and every subcommand's below it, each with its name."""
    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # an alias maps to the same parser
                yield from subcommands(sub)
