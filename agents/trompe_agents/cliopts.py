"""Command-line options every app shares: which backend and model, which tool server, how many rounds."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
from pathlib import Path

from .backends.base import Backend, BackendError, BackendOptions, MissingCredentials
from .backends.catalogue import DEFAULT_KEEP_ROUNDS, LEVELS
from .model_images import FORMATS, keep_rounds_option
from .plugins import create_backend
from .toolclient import ToolClient
from .toolserver import ServerChoice

KEYLESS = ("hf", "function", "replay")


def add_backend_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model backend")
    group.add_argument("--backend", default=os.environ.get("TROMPE_BACKEND", "claude"),
                       help="claude, openai, openai-chat, gemini, hf, function, replay or a plugin's "
                            "(default: claude; env TROMPE_BACKEND)")
    group.add_argument("--model", help="model name; hf: a local folder or hub id; function: module:function; "
                                       "replay: the cassette file")
    group.add_argument("--base-url", help="API base URL (openai-chat: a vLLM, Ollama or llama.cpp server)")
    group.add_argument("--api-key-env", metavar="VAR",
                       help="read the API key from this environment variable instead of the vendor's usual one")
    group.add_argument("--fallback-model", action="append", default=[], metavar="MODEL",
                       help="model to switch to on exhausted quota or repeated failure (repeatable, in order)")
    group.add_argument("--record", metavar="FILE", help="append every request/response to this JSONL cassette "
                                                        "(play it back later with --backend replay --model FILE)")
    group.add_argument("--max-retries", type=non_negative_int, default=4,
                       help="retries on rate limits, server errors and timeouts (default 4)")
    group.add_argument("--retry-cap", type=float, default=60.0, metavar="SECONDS",
                       help="longest retry-after wait honoured before giving up or switching model (default 60)")
    group.add_argument("--backend-option", action="append", default=[], type=_option, metavar="KEY=VALUE",
                       help="backend setting, value read as JSON when it parses (e.g. temperature=null, "
                            "anthropic_version=2023-06-01, native_final=false); repeatable")
    group.add_argument("--thinking", choices=LEVELS, default=None,
                       help="how much the model thinks before answering: Anthropic thinking budget or effort, "
                            "OpenAI reasoning effort, Gemini thinking level or budget (default: the vendor's)")
    group.add_argument("--image-format", choices=FORMATS, default="auto",
                       help="how images are encoded for the model: auto (PNG for drawings and small images, JPEG "
                            "for photographs), or force png, jpeg or webp (default auto)")
    group.add_argument("--keep-images", type=keep_images, default=DEFAULT_KEEP_ROUNDS, metavar="ROUNDS",
                       help="re-send the images of only the last ROUNDS rounds; older ones become a stub naming "
                            f"the id (view_image brings one back); 'all' keeps every image (default "
                            f"{DEFAULT_KEEP_ROUNDS})")
    group.add_argument("--max-rounds", type=positive_int, default=10,
                       help="tool-call rounds before the agent must answer (default 10)")


def backend_options_from_args(args: argparse.Namespace, prog: str) -> BackendOptions:
    """The backend's settings as plain data (worker processes build their own backend from them)."""
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            raise SystemExit(f"{prog}: --api-key-env {args.api_key_env}: that environment variable is not set")
    return BackendOptions(model=args.model, base_url=args.base_url, api_key=api_key,
                          max_retries=args.max_retries, fallback_models=args.fallback_model,
                          record=args.record, retry_cap=getattr(args, "retry_cap", 60.0),
                          extra=dict(getattr(args, "backend_option", None) or []),
                          thinking=getattr(args, "thinking", None),
                          image_format=getattr(args, "image_format", "auto"),
                          keep_images=getattr(args, "keep_images", DEFAULT_KEEP_ROUNDS))


def backend_from_args(args: argparse.Namespace, prog: str | None = None) -> Backend:
    """Build the backend, or exit with a one-line message (e.g. the missing API key variable)."""
    prog = prog or "trompe"
    options = backend_options_from_args(args, prog)
    try:
        return create_backend(args.backend, options)
    except MissingCredentials as exc:
        message = " ".join(str(exc).split())
        if not all(name in message for name in KEYLESS):
            message += f" (backends that need no key: {', '.join(KEYLESS)})"
        raise SystemExit(f"{prog}: {message}") from None
    except (BackendError, ValueError) as exc:  # ValueError: a --backend-option value out of range
        raise SystemExit(f"{prog}: {' '.join(str(exc).split())}") from None


def add_server_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("tool server (default: started inside this process)")
    where = group.add_mutually_exclusive_group()
    where.add_argument("--server-url", help="a running `trompe-server --http`, e.g. http://127.0.0.1:8765/mcp")
    where.add_argument("--server-cmd", help="start a server subprocess over stdio, e.g. 'trompe-server --tools core'")
    group.add_argument("--token", default=os.environ.get("TROMPE_TOKEN"),
                       help="bearer token for --server-url (env TROMPE_TOKEN)")
    group.add_argument("--tools", help="comma-separated tool tags to offer the model, e.g. core,analysis "
                                       "(default: all)")


def add_executor_args(parser: argparse.ArgumentParser, what: str, each: str) -> None:
    """--executor, --workers, --ray-address: where `what` happens, each worker with `each`."""
    from .executors import EXECUTORS

    parser.add_argument("--executor", choices=EXECUTORS, default="local",
                        help=f"where {what}: local (this machine, default) or ray (a Ray cluster; "
                             "pip install 'trompe[ray]')")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help=f"worker processes (local) or Ray actors sharing --concurrency, each with {each} "
                             "(default 1: everything in this process)")
    parser.add_argument("--ray-address", metavar="ADDR",
                        help="Ray cluster to join, e.g. HEAD:6379 or ray://HEAD:10001 (default: RAY_ADDRESS, else "
                             "a local Ray instance)")


def toolclient_from_args(args: argparse.Namespace) -> ToolClient:
    """A tool client for the chosen server; `--tools` limits what the model is offered."""
    return server_choice_from_args(args).client()


def server_choice_from_args(args: argparse.Namespace) -> ServerChoice:
    """The chosen tool server as plain data (each worker process opens its own client from it)."""
    return ServerChoice(url=args.server_url, token=args.token, command=args.server_cmd, tags=comma_list(args.tools))


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


def stop_on_sigterm() -> None:
    """SIGTERM ends the command as Ctrl-C does, so its cleanup (spill folders, checkpoints) runs before exit.

    It is passed on as SIGINT: inside asyncio.run that cancels the main task at its next await (a
    KeyboardInterrupt raised at an arbitrary point can leave an in-process server half torn down).
    """
    signal.signal(signal.SIGTERM, lambda signum, frame: signal.raise_signal(signal.SIGINT))


def comma_list(raw: str | None) -> list[str] | None:
    """'core, analysis' -> ['core', 'analysis']; None or empty -> None (meaning: no filter)."""
    items = [item.strip() for item in (raw or "").split(",") if item.strip()]
    return items or None


def _option(raw: str) -> tuple[str, object]:
    """KEY=VALUE with VALUE parsed as JSON where it parses (numbers, true/false, null), else kept as text."""
    key, sep, value = raw.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {raw!r}")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


def keep_images(raw: str) -> int | None:
    """--keep-images: a whole number of rounds >= 1, or 'all'."""
    try:
        return keep_rounds_option(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of rounds >= 1 or 'all', got {raw!r}") from None


def positive_int(raw: str) -> int:
    return _bounded_int(raw, 1)


def non_negative_int(raw: str) -> int:
    return _bounded_int(raw, 0)


def non_negative_float(raw: str) -> float:
    return _bounded_float(raw, 0.0, None, "a number >= 0")


def fraction(raw: str) -> float:
    return _bounded_float(raw, 0.0, 1.0, "a fraction from 0 to 1")


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

