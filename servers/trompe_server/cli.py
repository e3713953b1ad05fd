"""`trompe-server`: serve the image tools over stdio (default) or streamable HTTP."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from dataclasses import fields
from pathlib import Path

from trompe_kernel.errors import PluginError
from trompe_kernel.exits import exit_with
from trompe_kernel.version import __version__

from .admission import return_freed_pixels_to_the_os
from .pixel_blocks import keep_freed_blocks
from .app import ServerConfig, TrompeApp, create_app
from .commandline import entry_point, parse
from .limits import SCOPE, SCOPE_HELP, Limits, format_limit, parse_limit
from .plugins import SERVER_SETTINGS, plugin_listing
from .roots import server_roots
from .storages import parse_registry

LIMIT_HELP = {
    "max_pixels": "pixels per image",
    "max_images": "images per session",
    "max_session_bytes": "decoded pixel bytes per session, e.g. 2GiB",
    "max_sessions": "live sessions; the least recently used is evicted beyond this",
    "idle_timeout": "seconds before an unused session is dropped",
    "memory_budget": "pixel bytes kept in RAM across sessions; older images spill to disk",
    "max_source_bytes": "bytes of one input file or data: URL",
    "max_preview_side": "long side of the PNG returned; larger images get a downscaled preview",
    "max_inputs": "images one tool call may combine",
    "max_sessions_per_client": "sessions one client (bearer token, else MCP transport session, else TCP "
                               "connection) may hold; "
                               "its own least recently used one is evicted beyond this",
    "max_connections": "open HTTP connections; more are answered 503 and closed",
    "header_timeout": "seconds an HTTP client may take to send a request's headers",
    "read_timeout": "seconds an HTTP request body may stall between chunks",
    "min_body_rate": "bytes a second an HTTP request body must average after its first 2 seconds; slower "
                     "bodies are answered 408",
    "max_transport_sessions": "live MCP transport sessions over HTTP; beyond, one is closed: never used past "
                              "initialize first, of the client holding most, least recently used (none with a "
                              "shared --registry: HTTP is served statelessly then)",
    "transport_idle_timeout": "seconds before an idle MCP transport session is closed (none with a shared "
                              "--registry)",
    "transport_unused_timeout": "seconds an MCP transport session never used past initialize is kept (none with "
                                "a shared --registry)",
}


class LimitArg:
    """argparse type for a limit, so a bad value is reported with its accepted form."""

    def __init__(self, name: str, kind: type):
        self.name, self.kind = name, kind

    def __call__(self, raw: str) -> int | float:
        try:
            return parse_limit(self.name, raw, self.kind)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None


def env_setting(raw: str) -> tuple[str, str]:
    """argparse type for --env KEY=VALUE."""
    key, sep, value = raw.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{raw!r} is not KEY=VALUE")
    return key.strip(), value


def port_number(raw: str) -> int:
    """argparse type for --port, so a typo is named here rather than failing inside the socket layer."""
    try:
        port = int(raw)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a TCP port; accepted: 1 to 65535")
    return port


def registry_url(raw: str) -> str:
    """argparse type for --registry, so a typo is named with the accepted forms."""
    try:
        return parse_registry(raw)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


DESCRIPTION = __doc__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trompe-server", description=DESCRIPTION)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every option of the server, on `trompe-server` and on `trompe serve` alike (the tree is built in agents)."""
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--root", action="append", type=Path, default=None,
                        help="folder whose images may be opened by path (repeatable; default: the working "
                             "directory, unless it is /, the home folder or a system folder: then only images sent "
                             "inline)")
    parser.add_argument("--plugins", help="comma-separated plugin names to load (default: all; env TROMPE_PLUGINS)")
    parser.add_argument("--strict-plugins", action="store_true", default=None,
                        help="stop when a plugin fails to import (default: skip it with a warning; "
                             "env TROMPE_STRICT_PLUGINS=1)")
    parser.add_argument("--tools", help="comma-separated tags to expose, e.g. core,analysis (default: all; "
                        "env TROMPE_TOOLS)")
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=8765, help="HTTP port (default 8765)")
    parser.add_argument("--token", default=os.environ.get("TROMPE_TOKEN"),
                        help="bearer token required on HTTP requests (env TROMPE_TOKEN); needed off loopback. "
                             "Without one, HTTP is for a single user on loopback: every local user and program "
                             "can call the tools and counts as that user")
    parser.add_argument("--allowed-host", action="append", default=[],
                        help="extra Host header value accepted over HTTP, e.g. myhost:8765 (repeatable)")
    parser.add_argument("--registry", type=registry_url, default=os.environ.get("TROMPE_REGISTRY", "memory"),
                        help="where sessions and images live: memory (default), redis://HOST:PORT/DB shared by "
                             "every replica, or redis+s3://HOST:PORT/DB?bucket=NAME with the pixels in an S3 bucket "
                             "(env TROMPE_REGISTRY; docs/scaling.md)")
    parser.add_argument("--visual-prompt", action="append", type=Path, default=[], metavar="DIR",
                        help="offer a visual prompt a SEVEX run saved (e.g. runs/lines/best) as an MCP prompt, "
                             "besides the illusion method's (repeatable; docs/server.md, Prompts)")
    parser.add_argument("--list-tools", action="store_true", help="print each tool with its plugin and tags")
    parser.add_argument("--list-plugins", action="store_true", help="print each loaded plugin")
    parser.add_argument("--json", action="store_true", help="with --list-*, print JSON")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", type=env_setting,
                        help="set an environment variable that plugins read, e.g. "
                             "--env TROMPE_DETECTOR_MODEL=/models/gdino (repeatable)")
    defaults = Limits()
    for f in fields(Limits):
        parser.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, default=None, metavar="N",
                            type=LimitArg(f.name, type(getattr(defaults, f.name))),
                            help=f"{LIMIT_HELP[f.name]}{SCOPE_HELP[SCOPE[f.name]]} "
                                 f"(default {format_limit(getattr(defaults, f.name))}; "
                                 f"env TROMPE_{f.name.upper()})")


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    overrides = {f.name: getattr(args, f.name) for f in fields(Limits)}
    tags = args.tools or os.environ.get("TROMPE_TOOLS")
    roots, no_root = server_roots(args.root, Path.cwd(), Path.home())
    missing = [str(r) for r in roots if not r.is_dir()]
    if missing:
        raise ValueError(f"--root: not a folder: {', '.join(missing)}")
    if no_root and not (args.list_tools or args.list_plugins):
        print(no_root, file=sys.stderr)
    return ServerConfig(
        limits=Limits.from_env(**overrides),
        roots=roots,
        plugins=args.plugins.split(",") if args.plugins else None,
        tags=tags.split(",") if tags else None,
        registry=args.registry,
        strict_plugins=args.strict_plugins,
        visual_prompts=args.visual_prompt,
        plugin_settings=SERVER_SETTINGS,
        same_host_pixels=not args.http,  # stdio: the client started this process, so it is on this host
    )


def _exit_now(app) -> None:
    """On SIGTERM or Ctrl-C over stdio: a thread sits blocked on stdin, so remove the spill folder and exit at once."""
    app.registry.remove_spill()
    os._exit(0)


def tool_count(app) -> int:
    """Every tool a client will list: the plugins' and the session tools."""
    return len(asyncio.run(app.mcp.list_tools()))


def listing(app: TrompeApp, args: argparse.Namespace) -> str:
    """What --list-tools or --list-plugins prints: aligned columns, or JSON with --json."""
    if args.list_tools:
        rows = [{"name": s.name, "plugin": s.plugin, "tags": sorted(s.tags), "description": s.summary}
                for s in app.tools.values()]
        return json.dumps(rows, indent=2) if args.json else "\n".join(
            f"{r['name']:<26} {r['plugin']:<10} {','.join(r['tags']):<10} {r['description']}" for r in rows)
    rows = plugin_listing(app.plugins)
    return json.dumps(rows, indent=2) if args.json else "\n".join(
        f"{r['name']:<10} {r['distribution'] or '-'} {r['version'] or ''}  tools: {', '.join(r['tools'])}"
        + (f"  storages: {', '.join(r['storages'])}" if r.get("storages") else "") for r in rows)


@entry_point
def main(argv: list[str] | None = None) -> None:
    execute(parse(build_parser(), argv))


def execute(args: argparse.Namespace) -> None:
    """Serve, or print a listing, as the parsed options say."""
    os.environ.update(dict(args.env))
    try:
        app = create_app(config_from_args(args))
    except (PluginError, ValueError) as exc:  # a bad setting: a usage error (status 2, exits.py)
        raise exit_with(f"trompe-server: {exc}") from None
    try:
        if args.list_tools or args.list_plugins:
            print(listing(app, args))  # a reader that stops early (`| head`): commandline.entry_point
            return
        # only a serving process tunes malloc and Pillow's block cache: process-wide settings, which a listing
        # run in another program's process (a test, a notebook) must not leave behind
        return_freed_pixels_to_the_os()
        keep_freed_blocks()
        # numpy (imported at the first image) starts OpenBLAS with a thread per core, ~50 ms of a cold start's CPU
        # (bench/README.md, "cold start"); no tool calls BLAS. A user's own setting is kept.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        # uvicorn re-raises SIGTERM after its graceful shutdown: exiting normally then lets `finally` clean up.
        # SIGHUP (the terminal closed) stops it as SIGTERM does, unless it was started ignoring it (nohup); so
        # does SIGINT over stdio, unless ignored (a script's background job): what the caller asked for is kept.
        stop = (lambda *_: sys.exit(0)) if args.http else (lambda *_: _exit_now(app))
        signal.signal(signal.SIGTERM, stop)
        for signum in (signal.SIGHUP, *(() if args.http else (signal.SIGINT,))):
            if signal.getsignal(signum) is not signal.SIG_IGN:
                signal.signal(signum, stop)
        if args.http:
            from .http import serve_http

            serve_http(app.mcp, args.host, args.port, args.token, args.allowed_host,
                       max_body=max(4 * 1024 * 1024, app.config.limits.max_source_bytes * 4 // 3 + 65536),
                       limits=app.config.limits, tool_count=tool_count(app),
                       stateless=app.config.registry != "memory")
        else:
            print(f"trompe-server: serving {tool_count(app)} tools over stdio (Ctrl-C to stop)", file=sys.stderr)
            app.mcp.run()
    except KeyboardInterrupt:
        pass
    finally:
        app.registry.close()
