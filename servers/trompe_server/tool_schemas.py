"""MCP tool descriptions made once per signature, not once per app: the SDK builds a pydantic model and its
JSON schema for every function it is given (most of the cost of creating an app), and one app's handlers differ
from another app's only in the app they call."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from mcp.server.mcpserver.tools import Tool

_MADE: dict[tuple[Hashable, str], Tool] = {}  # (what fixes the signature, the details) -> a Tool without its fn


def described(handler: Callable[..., Any], signature_of: Hashable, **details: Any) -> Tool:
    """`handler` as an MCP tool. `signature_of` fixes the handler's signature and docstring (the plugin function
    it wraps, or its own code); `details` are Tool.from_function's (name, description, meta, annotations)."""
    key = (signature_of, repr(sorted(details.items())))
    made = _MADE.get(key)
    if made is None:  # a template holds no handler: it would keep the first app alive
        made = _MADE[key] = Tool.from_function(handler, **details).model_copy(update={"fn": None})
    return made.model_copy(update={"fn": handler})
