"""How a tool result carries its PNG: base64 text in an MCP ImageContent, or the bytes themselves for a caller in
this process (inprocess.py), chosen by who called, never by the tool."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from mcp.types import ImageContent
from pybase64 import b64encode_as_string
from pydantic import PrivateAttr, field_serializer

# True while an in-process call runs: its task, and the worker threads the task starts, copy it.
_AS_BYTES: ContextVar[bool] = ContextVar("trompe_png_as_bytes", default=False)


class PngBlock(ImageContent):
    """An image block holding its PNG bytes; `data` stays empty, and should the block ever be serialised for a
    wire, its base64 text is made then."""

    _png: bytes = PrivateAttr(b"")

    @classmethod
    def of(cls, png: bytes) -> PngBlock:
        block = cls(type="image", data="", mime_type="image/png")
        block._png = png
        return block

    @property
    def png(self) -> bytes:
        return self._png

    @field_serializer("data")
    def _base64(self, data: str) -> str:
        return b64encode_as_string(self._png)


def image_block(png: bytes) -> ImageContent:
    """A tool result's PNG: its bytes during an in-process call, base64 text for an MCP client."""
    if _AS_BYTES.get():
        return PngBlock.of(png)
    return ImageContent(type="image", data=b64encode_as_string(png), mime_type="image/png")


@contextmanager
def pngs_as_bytes() -> Iterator[None]:
    """Within: image_block gives PngBlocks (the caller is in this process and reads `png`)."""
    token = _AS_BYTES.set(True)
    try:
        yield
    finally:
        _AS_BYTES.reset(token)
