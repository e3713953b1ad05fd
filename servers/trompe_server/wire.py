"""What travels in MCP `_meta` besides the tools' own arguments: request ids one way, failure kinds the other.

Agents (trompe_agents.toolclient) read and write these; other MCP clients may ignore them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .errors import ToolInputError

# An error result's `_meta` (a resource error's `data`) key saying the server side failed, not the caller's
# arguments: 'session' (unknown, closed, expired or evicted) or 'registry' (its shared storage is unreachable
# or refused). A client should fail the task rather than show the error to a model.
FAILURE_META = "trompe/failure"
# A request's `_meta` key: the caller's id for this call, the same on every retry of it, so a call the server
# already stored (its reply was lost with a replica or a connection) returns what it stored instead of a copy.
REQUEST_META = "trompe/request"
REQUEST_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


def request_id(meta: Mapping[str, Any] | None) -> str | None:
    """The caller's request id, if it sent one; a malformed one is refused, naming the key and its form."""
    value = (meta or {}).get(REQUEST_META)
    if value is None:
        return None
    if not isinstance(value, str) or not REQUEST_ID.match(value):
        raise ToolInputError(f"_meta.{REQUEST_META}", f"{str(value)[:80]!r} is not a request id; use 8-64 "
                             "letters, digits, '_' or '-', the same on every retry of one call")
    return value
