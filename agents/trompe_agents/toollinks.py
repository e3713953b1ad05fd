"""The two ways a ToolClient reaches its server's tools: an MCP connection, or the server's own object in this process.

Both answer the same three requests with the same types (a tool list, a CallToolResult, an image resource's PNG);
they differ only in how an image's bytes travel: base64 text in an MCP ImageContent, the bytes themselves in a
`trompe_server.pngblock.PngBlock`. Which one a client uses is fixed when it is built (`ToolClient.in_process`
without `mcp=True` is the in-process one), never chosen per call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import pybase64

if TYPE_CHECKING:  # mcp is imported where a connection is made (toolclient.py says why)
    from mcp import Client
    from mcp.types import CallToolResult, ListToolsResult


class ToolLink(Protocol):
    """What ToolClient asks of a connection."""

    async def call_tool(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
                        ) -> CallToolResult: ...

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult: ...

    async def read_png(self, uri: str) -> bytes: ...


class McpLink:
    """An MCP client's connection (in memory, stdio or HTTP)."""

    def __init__(self, client: Client):
        self.client = client

    async def call_tool(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
                        ) -> CallToolResult:
        return await self.client.call_tool(name, arguments, meta=meta)

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        return await self.client.list_tools(cursor=cursor)

    async def read_png(self, uri: str) -> bytes:
        result = await self.client.read_resource(uri)
        return pybase64.b64decode(result.contents[0].blob)


def image_bytes(block: Any) -> bytes:
    """An image block's bytes: as they are from a server in this process, decoded from base64 from any other."""
    from trompe_server.pngblock import PngBlock  # imports mcp.types, loaded by then; not at the top (toolclient.py)

    return block.png if isinstance(block, PngBlock) else pybase64.b64decode(block.data)
