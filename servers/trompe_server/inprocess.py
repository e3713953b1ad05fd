"""A server's tools called from the same process: MCP's handlers and answers, without MCP's wire.

An agent whose tool server runs beside it (trompe_agents' `ToolClient.in_process`) gains nothing from JSON-RPC
models, OpenTelemetry spans, JSON-schema checks of its own server's results or base64 round trips, and they were
most of a 10-round sample's framework CPU (bench/README.md, issue 40). `InProcessServer` calls the very method an
MCP `tools/call` reaches (`TrompeMCP.call_tool`: unknown names, non-finite numbers, the SDK's argument validation
and our error texts), with the request's `_meta` (request ids, so a resend after a registry outage stores nothing
twice), and answers what the wire would deliver: arguments and structured content as JSON values, every failure
as the SDK's `tools/call` and `resources/read` handlers turn it into an error result or an `MCPError`.

The one difference is how an image travels: while an `InProcessServer` call runs, `pngblock.image_block` makes a
`PngBlock`, which holds the PNG's bytes; for every other caller it makes the usual base64 `ImageContent`.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, LATEST_PROTOCOL_VERSION, CallToolResult, ListToolsResult
from mcp.types import TextContent
from pydantic_core import to_jsonable_python

from .pngblock import pngs_as_bytes

logger = logging.getLogger(__name__)


class InProcessContext(Context):
    """A request made in this process: its `_meta` travels as an MCP request's would, no transport (request is None:
    the local client, as over stdio), and progress reports go nowhere, as when an MCP caller asks for none."""

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None


class InProcessServer:
    """The tools, tool list and image resource of one MCPServer, for a client in the same process (see above)."""

    def __init__(self, mcp: MCPServer):
        self.mcp = mcp

    def _context(self, method: str, meta: dict[str, Any] | None) -> Context:
        request = ServerRequestContext(session=None, lifespan_context=None, protocol_version=LATEST_PROTOCOL_VERSION,
                                       method=method, meta=meta)
        return InProcessContext(request_context=request, mcp_server=self.mcp)

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """Every tool, copied as a client would receive them (a caller's edits never reach the server's own)."""
        return ListToolsResult(tools=[tool.model_copy(deep=True) for tool in await self.mcp.list_tools()])

    async def call_tool(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
                        ) -> CallToolResult:
        """tools/call: the arguments as JSON would carry them; a ToolError or any other failure becomes an error
        result with its text and an MCPError stays one, as in the SDK's handler."""
        arguments = to_jsonable_python(arguments, inf_nan_mode="null")  # NaN is null on the wire, a tuple a list
        try:
            with pngs_as_bytes():
                result = await self.mcp.call_tool(name, arguments, self._context("tools/call", meta))
        except MCPError:
            raise
        except Exception as exc:  # noqa: BLE001 -- the SDK's tools/call boundary, logged as it logs them
            if not isinstance(exc, ToolError) or isinstance(exc, UnexpectedToolError):
                logger.exception("Tool %r raised an unexpected exception", name)
            return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        if result.structured_content is not None:
            result.structured_content = to_jsonable_python(result.structured_content, inf_nan_mode="null")
        return result

    async def read_png(self, uri: str) -> bytes:
        """resources/read of an image:// URI: the PNG's bytes; a resource error is the MCPError the SDK sends."""
        try:
            contents = await self.mcp.read_resource(uri, self._context("resources/read", None))
        except ResourceError as err:
            code = INVALID_PARAMS if isinstance(err, ResourceNotFoundError) else INTERNAL_ERROR
            raise MCPError(code, str(err), {"uri": uri}) from None
        return next(iter(contents)).content  # bytes: the image resource reads a PNG
