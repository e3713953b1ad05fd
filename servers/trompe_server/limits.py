"""Server limits with documented defaults, settable by CLI flag and environment."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields

MiB = 1024 * 1024
GiB = 1024 * MiB
MAX_LIMIT = 1e15  # above any sensible setting; keeps 1e400 or 'inf' from becoming an overflow later


@dataclass(frozen=True)
class Limits:
    """Bounds that keep one careless caller from exhausting the server."""

    max_pixels: int = 50_000_000  # width*height of any single image, input or output
    max_images: int = 500  # images per session, inputs included
    max_session_bytes: int = 2 * GiB  # decoded pixel bytes per session (memory + spill)
    max_sessions: int = 64  # live sessions; the least recently used one is evicted beyond this
    idle_timeout: float = 3600.0  # seconds without use before a session is dropped
    memory_budget: int = 1 * GiB  # decoded pixels kept in RAM across sessions; the rest spills to disk
    max_source_bytes: int = 25 * MiB  # encoded bytes of one data:/base64 source or file
    max_preview_side: int = 1568  # long side of the PNG sent back; larger images get a downscaled preview
    max_inputs: int = 6  # images one tool may combine
    max_sessions_per_client: int = 16  # sessions one client (token, transport session or connection) may hold
    max_connections: int = 256  # open HTTP connections; more are answered 503 and closed
    header_timeout: float = 10.0  # seconds a client may take to send a request's headers
    read_timeout: float = 30.0  # seconds a request body may stall between chunks
    min_body_rate: int = 16 * 1024  # bytes a second a request body must average after its first 2 seconds
    max_transport_sessions: int = 256  # live MCP transport sessions over HTTP; beyond, the least used is closed
    transport_idle_timeout: float = 1800.0  # seconds before an idle MCP transport session is closed
    transport_unused_timeout: float = 30.0  # seconds a transport session never used past initialize is kept

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides) -> Limits:
        """Defaults, then TROMPE_<FIELD> variables, then explicit overrides (CLI flags)."""
        environ = os.environ if environ is None else environ
        values = {}
        for f in fields(cls):
            raw = environ.get(f"TROMPE_{f.name.upper()}")
            if raw is not None:
                values[f.name] = parse_limit(f.name, raw, float if f.type == "float" else int)
        values.update({k: v for k, v in overrides.items() if v is not None})
        limits = cls(**values)
        for f in fields(limits):
            if getattr(limits, f.name) <= 0:
                raise ValueError(f"{f.name} must be positive, got {getattr(limits, f.name)}")
        return limits


# Where each limit is counted once replicas share a registry (docs/scaling.md, "Limits: whose count"): "shared"
# limits are kept in the registry, so they hold over all replicas together; "replica" limits are each server
# process's own; "request" limits bound one image, tool call or HTTP request, the same wherever it is checked.
SCOPE = {"max_pixels": "request", "max_images": "shared", "max_session_bytes": "shared", "max_sessions": "shared",
         "idle_timeout": "shared", "memory_budget": "replica", "max_source_bytes": "request",
         "max_preview_side": "request", "max_inputs": "request", "max_sessions_per_client": "shared",
         "max_connections": "replica", "header_timeout": "request", "read_timeout": "request",
         "min_body_rate": "request", "max_transport_sessions": "replica", "transport_idle_timeout": "replica",
         "transport_unused_timeout": "replica"}
SCOPE_HELP = {"shared": "; held in the registry, so over all replicas sharing one --registry",
              "replica": "; each replica (server process) its own", "request": ""}


def format_limit(value: int | float) -> str:
    """The inverse of parse_limit for help texts: 2147483648 -> '2GiB', 3600.0 -> '3600'."""
    for suffix, scale in (("GiB", GiB), ("MiB", MiB)):
        if isinstance(value, int) and value >= scale and value % scale == 0:
            return f"{value // scale}{suffix}"
    return str(int(value)) if value == int(value) else str(value)


def parse_limit(name: str, raw: str, kind: type) -> int | float:
    """Read '2GiB', '512MiB', '50000000' or '3600' into a number, naming the setting on failure."""
    text = raw.strip()
    scale = 1
    for suffix, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if text.endswith(suffix):
            text, scale = text[: -len(suffix)], factor
            break
    try:
        value = float(text) * scale
        if math.isnan(value):
            raise ValueError(text)
    except ValueError:
        raise ValueError(f"{name}: {raw!r} is not a number (examples: 500, 2GiB, 512MiB)") from None
    if not math.isfinite(value) or value > MAX_LIMIT:
        raise ValueError(f"{name}: {raw!r} is too large; accepted: a positive number up to {MAX_LIMIT:.0e} "
                         "(examples: 500, 2GiB, 512MiB)")
    if scale > 1 and kind is int:
        return int(value)
    if kind is int and not value.is_integer():
        raise ValueError(f"{name}: {raw!r} is not a whole number (examples: 500, 2GiB, 512MiB)")
    return kind(value)
