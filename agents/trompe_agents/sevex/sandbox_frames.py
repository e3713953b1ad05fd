"""Length-prefixed JSON frames between the parent and a sandboxed program, with a hard size cap.

Imported by the parent and, inside the sandbox, by sandbox_child.py: standard library only.
"""

from __future__ import annotations

import json
import struct
from typing import Any, BinaryIO

MAX_FRAME = 16 * 1024 * 1024  # bytes of one message body to a program (a job or a call's result)
# bytes of one message from a program (answer, log tail, a call's arguments); larger ones fail the sample. Its
# JSON can cost the parent ~20x its size in objects ("[[],[],...]"), so this bounds what a program makes it hold.
FROM_PROGRAM = 1024 * 1024
HEADER = struct.Struct(">I")


class FrameError(ValueError):
    """A frame that breaks the protocol: truncated, not a JSON object, or over MAX_FRAME."""


class FrameTooLarge(FrameError):
    """A message over its cap; says how large it was."""

    def __init__(self, size: int, limit: int = MAX_FRAME):
        super().__init__(f"a message of {size:,} bytes is over the sandbox's limit of {limit:,} bytes")
        self.size = size


def encode(message: dict[str, Any], limit: int = MAX_FRAME) -> bytes:
    """One frame: 4-byte big-endian length, then the UTF-8 JSON body (ASCII, with escapes, where a string holds
    a lone surrogate, which UTF-8 cannot carry: the reader decides what to do with it)."""
    try:
        body = json.dumps(message, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        body = json.dumps(message).encode()
    if len(body) > limit:
        raise FrameTooLarge(len(body), limit)
    return HEADER.pack(len(body)) + body


def body_size(header: bytes, limit: int = MAX_FRAME) -> int:
    """The body length a header announces, refused before any of the body is read when over the cap."""
    (size,) = HEADER.unpack(header)
    if size > limit:
        raise FrameTooLarge(size, limit)
    return size


def decode(body: bytes) -> dict[str, Any]:
    """A frame body as a JSON object (deeply nested or malformed input is a FrameError, never a crash)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise FrameError("a frame must hold a JSON object")
    return message


def read(stream: BinaryIO) -> dict[str, Any] | None:
    """The next frame from a blocking stream; None at a clean end of input."""
    header = stream.read(HEADER.size)
    if not header:
        return None
    if len(header) < HEADER.size:
        raise FrameError("input ended inside a frame header")
    size = body_size(header)
    body = stream.read(size)
    if len(body) < size:
        raise FrameError("input ended inside a frame")
    return decode(body)
