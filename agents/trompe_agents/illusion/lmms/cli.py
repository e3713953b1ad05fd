"""`lmms-eval --model trompe --model_args KEY=VALUE,...`: lmms-eval's model arguments read as illusion-agent's options.

Each key is an `illusion-agent ask`/`run` option without its dashes, `-` written `_` (backend, model, base_url,
max_rounds, tools, allow, router, task, preset, backend_option, ...), read by the same option groups and turned
into a backend, tool server and agent by the same functions as on illusion-agent's command line, so a setting
added there is reachable here. Only the pieces lmms-eval's own argument string cannot say differently:
`tools=core,analysis` (a piece without `=` continues a tools or allow list), `tools=none` (the no-tools baseline,
`--no-tools`), `no_tools=true` for a flag, a repeated key for a repeatable option, and three of the plugin's own:
`out` (the trace folder), `concurrency` and `rate_limit` (requests per minute, as `illusion-agent run`'s). An
unknown key or a bad value ends lmms-eval with one line, status 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime
from pathlib import Path

from trompe_kernel.exits import exit_with

from ... import presets
from ...backends.ratelimit import RateLimited, RateLimiter
from ...cliopts import RUN, add_options, backend_from_args, named, out_folder, positive_float, server_choice_from_args
from ..cli import add_agent_args, add_global_args, agent_config
from .model import Settings, TrompeModel

PROG = "lmms-eval --model trompe"
APP = "illusion-agent"  # whose presets and option groups these are
LISTS = ("tools", "allow")  # values that are comma lists themselves
KEY = re.compile(r"[a-z][a-z0-9_]*")
TRUE, FALSE = ("true", "1", "yes", ""), ("false", "0", "no")


class _Refusing(argparse.ArgumentParser):
    """A parser whose errors are exceptions (the message), never a usage screen and exit inside lmms-eval."""

    def error(self, message: str):  # type: ignore[override]
        message = re.sub(r"--([a-z][a-z0-9-]*)", lambda m: m.group(1).replace("-", "_"), message)
        raise ValueError(message.removeprefix("argument "))  # "max_rounds: expected ...", as the key is written


def build_parser() -> argparse.ArgumentParser:
    """illusion-agent's backend, agent-loop, server and agent options, and the plugin's --out and --concurrency."""
    parser = _Refusing(prog=PROG, add_help=False, allow_abbrev=False)
    add_global_args(parser)
    add_agent_args(parser)
    parser.add_argument("--out", type=out_folder, help="trace folder (default: beside lmms-eval's --output_path)")
    add_options(parser, "run", (named(RUN, "concurrency"),))
    parser.add_argument("--rate-limit", type=positive_float, metavar="RPM", help="backend requests per minute")
    return parser


def split_model_args(raw: str) -> list[tuple[str, str]]:
    """KEY=VALUE pieces in order; a piece without `=` continues the tools or allow list before it."""
    pairs: list[tuple[str, str]] = []
    for piece in (p.strip() for p in raw.split(",")):
        key, sep, value = piece.partition("=")
        if not piece:
            continue
        if sep and KEY.fullmatch(key.strip()):
            pairs.append((key.strip(), value.strip()))
        elif pairs and pairs[-1][0] in LISTS and not sep:
            pairs[-1] = (pairs[-1][0], f"{pairs[-1][1]},{piece}")
        else:
            raise ValueError(f"{piece!r} is not KEY=VALUE (only a tools or allow list goes on after a comma)")
    return pairs


def to_argv(pairs: list[tuple[str, str]], parser: argparse.ArgumentParser) -> list[str]:
    """The pairs as illusion-agent flags; an unknown key is refused, naming the accepted ones."""
    actions = {action.dest: action for action in parser._actions if action.option_strings}
    argv = []
    for key, value in pairs:
        if key == "tools" and value.lower() == "none":
            argv.append("--no-tools")
            continue
        if (action := actions.get(key)) is None:
            raise ValueError(f"unknown key {key!r}; accepted: {', '.join(sorted(actions))}")
        flag = action.option_strings[0]
        if action.nargs == 0:  # a flag such as no_tools or normalize
            if value.lower() not in TRUE + FALSE:
                raise ValueError(f"{key}: expected true or false, got {value!r}")
            argv += [flag] if value.lower() in TRUE else []
        else:
            argv.append(f"{flag}={value}")
    return argv


def default_out(raw: str, argv: list[str] | None = None) -> Path:
    """Beside lmms-eval's logs: OUTPUT_PATH/<the model folder lmms-eval writes>/trompe_<time> (lmms-eval's own
    naming, loggers/evaluation_tracker.py); ./trompe-lmms-<time> when lmms-eval was given no --output_path."""
    reader = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    reader.add_argument("--output_path")
    given, _ = reader.parse_known_args(sys.argv[1:] if argv is None else argv)
    stamp = f"{datetime.now():%Y%m%dT%H%M%S}"
    if not given.output_path:
        return Path(f"trompe-lmms-{stamp}")
    from lmms_eval.loggers.evaluation_tracker import GeneralConfigTracker
    from lmms_eval.utils import sanitize_model_name

    folder = sanitize_model_name(GeneralConfigTracker._get_model_name(raw))
    return Path(given.output_path) / folder / f"trompe_{stamp}"


def settings_from_model_args(raw: str) -> Settings:
    """The backend, tool server, agent and trace folder `--model_args` ask for (ValueError: which key is wrong)."""
    parser = build_parser()
    argv = to_argv(split_model_args(raw), parser)
    args = parser.parse_args(argv)
    args.chosen = presets.from_args(args, build_parser, APP, argv)  # preset=paper
    args.task = args.task or 2  # Task II's prompt: the broad one (counting, hidden content, comparisons, ...)
    config = agent_config(args)
    backend = backend_from_args(args, PROG)
    if args.chosen:
        args.chosen.check(presets.planned(backend), PROG)
    if args.rate_limit is not None:  # as illusion-agent run --rate-limit: every request waits its turn
        backend = RateLimited(backend, RateLimiter(args.rate_limit))
    described = {"model_args": raw, "options": argv,
                 **({"preset": args.chosen.record()} if args.chosen else {})}
    return Settings(backend, server_choice_from_args(args), config, args.out or default_out(raw),
                    args.concurrency, described)


class Trompe(TrompeModel):
    """The class lmms-eval loads for `--model trompe` (manifest.py): built from the model_args string itself."""

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None) -> Trompe:
        """lmms-eval's batch_size and device do not apply to an agent (`concurrency` does); they are ignored."""
        try:
            return cls(settings_from_model_args(arg_string or ""))
        except ValueError as exc:
            raise exit_with(f"{PROG}: --model_args: {exc}") from None
