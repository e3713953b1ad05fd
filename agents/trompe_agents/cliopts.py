"""Command-line options every app shares: which backend and model, which tool server, how many rounds."""

from __future__ import annotations

import argparse
import json
import os

from .backends.base import Backend, BackendError, BackendOptions, MissingCredentials
from .plugins import create_backend
from .toolclient import ToolClient

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
    group.add_argument("--max-rounds", type=positive_int, default=10,
                       help="tool-call rounds before the agent must answer (default 10)")


def backend_from_args(args: argparse.Namespace, prog: str | None = None) -> Backend:
    """Build the backend, or exit with a one-line message (e.g. the missing API key variable)."""
    prog = prog or "trompe"
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            raise SystemExit(f"{prog}: --api-key-env {args.api_key_env}: that environment variable is not set")
    options = BackendOptions(model=args.model, base_url=args.base_url, api_key=api_key,
                             max_retries=args.max_retries, fallback_models=args.fallback_model,
                             record=args.record, retry_cap=getattr(args, "retry_cap", 60.0),
                             extra=dict(getattr(args, "backend_option", None) or []))
    try:
        return create_backend(args.backend, options)
    except MissingCredentials as exc:
        message = " ".join(str(exc).split())
        if not all(name in message for name in KEYLESS):
            message += f" (backends that need no key: {', '.join(KEYLESS)})"
        raise SystemExit(f"{prog}: {message}") from None
    except BackendError as exc:
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


def toolclient_from_args(args: argparse.Namespace) -> ToolClient:
    """A tool client for the chosen server; `--tools` limits what the model is offered."""
    tags = comma_list(args.tools)
    if args.server_url:
        client = ToolClient.http(args.server_url, args.token)
    elif args.server_cmd:
        client = ToolClient.stdio(args.server_cmd)
    else:
        from trompe_server.app import ServerConfig

        client = ToolClient.in_process(ServerConfig(tags=tags))
    client.default_tags = tags
    return client


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


def positive_int(raw: str) -> int:
    return _bounded_int(raw, 1)


def non_negative_int(raw: str) -> int:
    return _bounded_int(raw, 0)


def _bounded_int(raw: str, low: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if value < low:
        raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {raw!r}")
    return value

