"""What every trompe command line does the way shell tools do, in one place for the four entry points.

A reader that stops early (`trompe models | head -1`) ends the command quietly with status 0; every command and
subcommand answers `--version`; an option the subcommand it is given to does not take is named with the nearest
one that subcommand takes (`--datset`: "did you mean --dataset?"), or where it belongs, status 2, before argparse
would report only a missing required option or an unrecognized argument with no subcommand named.
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
    """End with status 2 on an `--option` the (sub)command it is given to does not take, naming the fix.

    Words are read as argparse reads them: each belongs to the deepest subcommand named before it, so an option
    is known only if that parser takes it (or a prefix argparse would accept); the suggestion comes from that
    parser alone, and an option that belongs elsewhere in the tree says where (`illusion-agent report --limit`:
    `run` takes it; `illusion-agent report --backend`: it goes before `report`)."""
    path = [parser]
    words = iter(argv)
    for word in words:
        if word == "--":
            return
        here = path[-1]
        name = word.split("=", 1)[0]
        if name.startswith("--"):
            action = _option_action(here, name)
            if action is None:
                here.error(f"unrecognized option {name}{_fix(name, path, parser)}")
            if "=" not in word:
                for _ in range(_values_taken(action)):
                    next(words, None)
        elif (sub := _subcommand_choices(here).get(word)) is not None:
            path.append(sub)


def _option_action(parser: argparse.ArgumentParser, name: str) -> argparse.Action | None:
    """The action `name` selects in `parser`: its exact option, else a long option it begins (argparse itself
    names the candidates of an ambiguous one, or refuses an abbreviation where the parser takes none)."""
    if name in parser._option_string_actions:
        return parser._option_string_actions[name]
    begun = {parser._option_string_actions[option] for option in _long_options(parser) if option.startswith(name)}
    return next(iter(begun), None)


def _values_taken(action: argparse.Action) -> int:
    """How many following words an option consumes for certain (`--out DIR`: one; a flag, or `nargs='*'`: none)."""
    if action.nargs is None:  # (flags, counts, --help and --version have nargs 0)
        return 1
    return action.nargs if isinstance(action.nargs, int) else 0


def _fix(name: str, path: list[argparse.ArgumentParser], root: argparse.ArgumentParser) -> str:
    """What to do about an option the last parser of `path` does not take: the nearest of its own, or where it goes."""
    here = path[-1]
    words = {option[2:]: option for option in _long_options(here)}  # the shared "--" is no likeness
    near = difflib.get_close_matches(name[2:], list(words), n=1, cutoff=0.6)
    if near:
        return f" (did you mean {words[near[0]]}?)"
    above = next((each for each in reversed(path[:-1]) if _option_action(each, name) is not None), None)
    if above is not None:
        below = path[path.index(above) + 1].prog.rsplit(" ", 1)[-1]
        return f": it is an option of {above.prog}, so it goes before `{below}`"
    elsewhere = [prog for prog, each in subcommands(root) if each is not here and name in each._option_string_actions]
    takes = f" ({', '.join(elsewhere)} {'takes' if len(elsewhere) == 1 else 'take'} it)" if elsewhere else ""
    return f"{takes}; `{here.prog} --help` lists the options it takes"


def _subcommand_choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Its subcommands by name, aliases included (argparse allows one set of them per parser)."""
    return next((action.choices for action in parser._actions if isinstance(action, argparse._SubParsersAction)), {})


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(option for option in parser._option_string_actions if option.startswith("--"))


def subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The parser and every subcommand's below it, each with its name."""
    yield parser.prog, parser
    for sub in dict.fromkeys(_subcommand_choices(parser).values()):  # an alias maps to the same parser
        yield from subcommands(sub)
