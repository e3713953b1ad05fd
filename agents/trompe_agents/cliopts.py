"""Command-line option groups every app shares: backend, tool server, run, executor, agent loop.

Each group is a tuple of `Option`s added to a parser by one function, with a role prefix where one command runs
two models (sevex: --target-*, --explorer-*), and read back by one function into the typed value the library
takes (`BackendOptions`, `ServerChoice`); a flag added to a group reaches every command that adds it.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trompe_kernel.exits import exit_with

from .backends.base import Backend, BackendError, BackendOptions, MissingCredentials
from .backends.catalogue import DEFAULT_KEEP_ROUNDS, LEVELS, default_keep_images
from .executors import executor_names
from .backends.model_images import FORMATS, keep_rounds_option
from .backends.settings import SettingError
from .plugins import backend_settings, create_backend
from .toolclient import CALL_DEADLINE, ToolClient
from .toolserver import ServerChoice

KEYLESS = ("hf", "function", "replay")
SERVICE_TIERS = ("standard", "flex", "batch")


@dataclass(frozen=True)
class Option:
    """One flag of an option group: its name without dashes or role prefix, and what argparse needs to know.

    `exclusive` names a set of options of which a command line may give one (e.g. --server-url or --server-cmd).
    """

    name: str
    settings: Mapping[str, Any]
    exclusive: str | None = None

    def flag(self, role: str = "") -> str:
        """'--image-format', or '--target-image-format' for SEVEX's target role."""
        return f"--{role}-{self.name}" if role else f"--{self.name}"

    def dest(self, role: str = "") -> str:
        return self.flag(role)[2:].replace("-", "_")


def add_options(parser: argparse.ArgumentParser, title: str, options: tuple[Option, ...], role: str = "",
                overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Add a group's options under one heading, each with the role's prefix; `overrides` change one's settings."""
    group = parser.add_argument_group(title)
    exclusive: dict[str, Any] = {}
    for option in options:
        if option.exclusive is not None and option.exclusive not in exclusive:
            exclusive[option.exclusive] = group.add_mutually_exclusive_group()
        where = group if option.exclusive is None else exclusive[option.exclusive]
        where.add_argument(option.flag(role), dest=option.dest(role),
                           **{**option.settings, **(overrides or {}).get(option.name, {})})


def named(options: tuple[Option, ...], name: str) -> Option:
    """The group's option called `name`."""
    return next(option for option in options if option.name == name)


KEEP_BY_BACKEND = 0  # --keep-images not given: the backend decides (default_keep_images); a user's value is >= 1


def _option(raw: str) -> tuple[str, str]:
    """KEY=VALUE, the value kept as text: the chosen backend's settings class reads it (backends/settings.py)."""
    key, sep, value = raw.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {raw!r}")
    return key.strip(), value


def keep_images(raw: str) -> int | None:
    """--keep-images: a whole number of rounds >= 1, or 'all'."""
    try:
        return keep_rounds_option(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of rounds >= 1 or 'all', got {raw!r}") from None


def _bounded_float(raw: str, low: float, high: float | None, accepted: str) -> float:
    """A float within [low, high]; NaN and text are refused like out-of-range numbers."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (low <= value and (high is None or value <= high)):
        raise argparse.ArgumentTypeError(f"expected {accepted}, got {raw!r}")
    return value


def _bounded_int(raw: str, low: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if value < low:
        raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {raw!r}")
    return value


def positive_int(raw: str) -> int:
    return _bounded_int(raw, 1)


def non_negative_int(raw: str) -> int:
    return _bounded_int(raw, 0)


def positive_float(raw: str) -> float:
    value = _bounded_float(raw, 0.0, None, "a number of seconds > 0")
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {raw!r}")
    return value


def non_negative_float(raw: str) -> float:
    return _bounded_float(raw, 0.0, None, "a number >= 0")


def fraction(raw: str) -> float:
    return _bounded_float(raw, 0.0, 1.0, "a fraction from 0 to 1")


# Every setting of a model client; a flag added here reaches illusion-agent, sevex (--target-*, --explorer-*) and
# every other command that adds the group (tests/agents/test_option_groups.py checks each command has them all).
BACKEND = (
    Option("backend", dict(default=os.environ.get("TROMPE_BACKEND", "claude"),
                           help="claude, openai, openai-chat, gemini, hf, function, replay or a plugin's "
                                "(default: claude; env TROMPE_BACKEND)")),
    Option("model", dict(help="model name; hf: a local folder or hub id; function: module:function; "
                              "replay: the cassette file")),
    Option("base-url", dict(help="API base URL (openai-chat: a vLLM, Ollama or llama.cpp server)")),
    Option("api-key-env", dict(metavar="VAR", help="read the API key from this environment variable instead of "
                                                   "the vendor's usual one")),
    Option("fallback-model", dict(action="append", default=[], metavar="MODEL",
                                  help="model to switch to on exhausted quota or repeated failure (repeatable, in "
                                       "order)")),
    Option("record", dict(metavar="FILE", help="append every request/response to this JSONL cassette (play it "
                                               "back later with --backend replay --model FILE)")),
    Option("max-retries", dict(type=non_negative_int, default=4,
                               help="retries on rate limits, server errors and timeouts (default 4)")),
    Option("retry-cap", dict(type=non_negative_float, default=60.0, metavar="SECONDS",
                             help="longest retry-after wait honoured before giving up or switching model "
                                  "(default 60)")),
    Option("timeout", dict(type=positive_float, default=None, metavar="SECONDS",
                           help="longest time one model request may take, reply included (default 120, 900 on "
                                "--service-tier flex; --thinking high may need more)")),
    Option("service-tier", dict(choices=SERVICE_TIERS, default="standard",
                                help="flex: OpenAI's and Gemini's half-price tier, slower and sometimes busy (429, "
                                     "retried); batch: claude's Message Batches, half price, answered within 24 "
                                     "hours, for requests without tools (--no-tools; default standard)")),
    Option("backend-option", dict(action="append", default=[], type=_option, metavar="KEY=VALUE",
                                  help="one of the backend's own settings (docs/vendors.md lists each backend's), "
                                       "e.g. temperature=none, anthropic_version=2023-06-01, native_final=false; "
                                       "repeatable")),
    Option("thinking", dict(choices=LEVELS, default=None,
                            help="how much the model thinks before answering: Anthropic thinking budget or effort, "
                                 "OpenAI reasoning effort, Gemini thinking level or budget (default: the vendor's)")),
    Option("image-format", dict(choices=FORMATS, default="auto",
                                help="how images are encoded for the model: auto (PNG for drawings and small "
                                     "images, JPEG for photographs), or force png, jpeg or webp (default auto)")),
    Option("keep-images", dict(type=keep_images, default=KEEP_BY_BACKEND, metavar="ROUNDS",
                               help="re-send the images of only the last ROUNDS rounds; older ones become a stub "
                                    "naming the id (view_image brings one back); 'all' keeps every image (default: "
                                    "all on the hosted backends, whose prompt cache makes that cheaper, "
                                    f"{DEFAULT_KEEP_ROUNDS} on hf)")),
)

SERVER = (
    Option("server-url", dict(help="a running `trompe-server --http`, e.g. http://127.0.0.1:8765/mcp, or several "
                                   "replicas' URLs, comma-separated: a call that fails or hangs on one is sent to "
                                   "the next"), "where"),
    Option("tool-timeout", dict(type=positive_float, default=CALL_DEADLINE, metavar="SECONDS",
                                help="seconds one tool call to --server-url may take before it is sent again, to "
                                     "the next replica if several are given; its resends share one such deadline "
                                     f"per URL, then the sample fails (default {CALL_DEADLINE:g})")),
    Option("server-cmd", dict(help="start a server subprocess over stdio, e.g. 'trompe-server --tools core'"),
           "where"),
    Option("token", dict(default=os.environ.get("TROMPE_TOKEN"), help="bearer token for --server-url (env "
                                                                      "TROMPE_TOKEN)")),
    Option("tools", dict(help="comma-separated tool tags to offer the model, e.g. core,analysis (default: the "
                              "task's own tags)")),
)

EXECUTOR = (
    Option("executor", dict(default="local")),  # choices: the registered executors, when a parser is built
    Option("workers", dict(type=positive_int, default=1)),
    Option("ray-address", dict(metavar="ADDR", help="Ray cluster to join, e.g. HEAD:6379 or ray://HEAD:10001 "
                                                    "(default: RAY_ADDRESS, else a local Ray instance)")),
)

RUN = (
    Option("concurrency", dict(type=positive_int, default=4, help="samples in flight at once in the whole run, "
                                                                  "shared among --workers (default 4)")),
    Option("limit", dict(type=positive_int, help="only the first N samples")),
    Option("no-progress", dict(action="store_true", help="no progress bar")),
)

ROUNDS = (Option("max-rounds", dict(type=positive_int, default=10,
                                    help="tool-call rounds before the agent must answer (default 10)")),)


def add_backend_args(parser: argparse.ArgumentParser, role: str = "",
                     overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """The backend group: which backend and model, and every setting of its client (`role`: SEVEX's prefix)."""
    add_options(parser, f"{role} model" if role else "model backend", BACKEND, role, overrides)


def backend_options_from_args(args: argparse.Namespace, prog: str, role: str = "") -> BackendOptions:
    """The backend's settings as plain data (worker processes build their own backend from them)."""
    value = {option.name: getattr(args, option.dest(role)) for option in BACKEND}  # the group's own values
    api_key = None
    if value["api-key-env"]:
        api_key = os.environ.get(value["api-key-env"])
        if not api_key:
            raise exit_with(f"{prog}: {named(BACKEND, 'api-key-env').flag(role)} {value['api-key-env']}: that "
                            "environment variable is not set")
    keep = value["keep-images"]
    try:
        settings = backend_settings(value["backend"], value["backend-option"])
    except SettingError as exc:
        raise exit_with(f"{prog}: {named(BACKEND, 'backend-option').flag(role)} {exc}") from None
    except BackendError as exc:
        raise exit_with(f"{prog}: {' '.join(str(exc).split())}") from None
    return BackendOptions(model=value["model"], base_url=value["base-url"], api_key=api_key,
                          max_retries=value["max-retries"], fallback_models=value["fallback-model"],
                          record=value["record"], retry_cap=value["retry-cap"], settings=settings,
                          thinking=value["thinking"], image_format=value["image-format"],
                          keep_images=default_keep_images(value["backend"]) if keep == KEEP_BY_BACKEND else keep,
                          timeout=value["timeout"], service_tier=value["service-tier"])


def backend_from_args(args: argparse.Namespace, prog: str | None = None, role: str = "") -> Backend:
    """Build the backend, or end the command (status 2) with a one-line message (e.g. the missing key variable)."""
    prog = prog or "trompe"
    options = backend_options_from_args(args, prog, role)
    try:
        return create_backend(getattr(args, named(BACKEND, "backend").dest(role)), options)
    except MissingCredentials as exc:
        message = " ".join(str(exc).split())
        if not all(name in message for name in KEYLESS):
            message += f" (backends that need no key: {', '.join(KEYLESS)})"
        raise exit_with(f"{prog}: {message}") from None
    except (BackendError, ValueError) as exc:  # ValueError: e.g. a --service-tier the vendor does not have
        raise exit_with(f"{prog}: {' '.join(str(exc).split())}") from None


def add_shared_option(parser: argparse.ArgumentParser, option: Option, roles: tuple[str, ...], help: str) -> None:
    """An unprefixed flag that sets the option of every role at once (sevex --max-retries: both models')."""
    parser.add_argument(option.flag(), dest=f"_shared_{option.dest()}", action=_SetEach,
                        dests=tuple(option.dest(role) for role in roles), default=argparse.SUPPRESS, help=help,
                        metavar=option.settings.get("metavar", option.dest().upper()),
                        **{k: v for k, v in option.settings.items() if k in ("type", "choices")})


class _SetEach(argparse.Action):
    """Store the value under several destinations (one per role)."""

    def __init__(self, option_strings, dest, dests: tuple[str, ...], **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.dests = dests

    def __call__(self, parser, namespace, values, option_string=None):
        for dest in self.dests:
            setattr(namespace, dest, values)


def add_run_args(parser: argparse.ArgumentParser, limit: bool = True) -> None:
    """The run group: how many samples at once, how many in all (`limit`: whether the command takes --limit)."""
    add_options(parser, "run", tuple(o for o in RUN if limit or o.name != "limit"))


def add_rounds_args(parser: argparse.ArgumentParser) -> None:
    """--max-rounds of the agent loop."""
    add_options(parser, "agent loop", ROUNDS)


def add_server_args(parser: argparse.ArgumentParser,
                    overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """The server group: which tool server (default: one inside this process) and which of its tools; a command
    says in `overrides` what its `--tools` default really offers."""
    add_options(parser, "tool server (default: started inside this process)", SERVER, overrides=overrides)


def add_executor_args(parser: argparse.ArgumentParser, what: str, each: str) -> None:
    """The executor group: where `what` happens, each worker with `each`."""
    add_options(parser, "executor", EXECUTOR, overrides={
        "executor": {"choices": executor_names(),
                     "help": f"where {what}: local (this machine, default) or ray (a Ray cluster; "
                             "pip install 'trompe[ray]')"},
        "workers": {"help": f"worker processes (local) or Ray actors sharing --concurrency, each with {each} "
                            "(default 1: everything in this process)"}})


def toolclient_from_args(args: argparse.Namespace) -> ToolClient:
    """A tool client for the chosen server; `--tools` limits what the model is offered."""
    return server_choice_from_args(args).client()


def server_choice_from_args(args: argparse.Namespace) -> ServerChoice:
    """The chosen tool server as plain data (each worker process opens its own client from it)."""
    return ServerChoice(url=args.server_url, token=args.token, command=args.server_cmd, tags=comma_list(args.tools),
                        timeout=args.tool_timeout)


def out_folder(raw: str) -> Path:
    """argparse type for a run folder: a file in the way or a read-only place is named before any work."""
    path = Path(raw).expanduser()
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{raw!r}: {existing} is a file; accepted: a folder (created if missing)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{raw!r}: {existing} is not writable (read-only); choose a folder "
                                         "you can write to")
    return path


def comma_list(raw: str | None) -> list[str] | None:
    """'core, analysis' -> ['core', 'analysis']; None or empty -> None (meaning: no filter)."""
    items = [item.strip() for item in (raw or "").split(",") if item.strip()]
    return items or None
