"""Talk to a trompe server (in-process, stdio subprocess or HTTP) in the neutral message model."""

from __future__ import annotations

import base64
import logging
import shlex
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from mcp import Client, StdioServerParameters
from mcp.types import Tool, ToolListChangedNotification

from .messages import ImagePart, Message, TextPart, ToolSchema

# Session tools the model may use itself; the others (open/add/close) are the client's business.
MODEL_SESSION_TOOLS = ("list_images", "view_image")
MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8", "image/jpeg"), (b"RIFF", "image/webp"), (b"GIF8", "image/gif"))


@dataclass
class SessionInfo:
    """An open session: its id and the pixel size of each input image."""

    id: str
    sizes: dict[str, tuple[int, int]]


@dataclass
class ToolResultParts:
    """A tool result in neutral parts: text, images with their registry ids, error flag, metadata."""

    text: str
    images: list[ImagePart] = field(default_factory=list)
    is_error: bool = False
    structured: dict[str, Any] | None = None

    def to_message(self, call_id: str, name: str) -> Message:
        """The tool message answering one call."""
        return Message(role="tool", parts=[TextPart(self.text), *self.images], tool_call_id=call_id,
                       tool_name=name, is_error=self.is_error)


class ToolClientError(RuntimeError):
    """The server refused a session-level request (bad image, unknown session, unknown tool name)."""


def image_data_url(image: Path | str | bytes) -> str:
    """A data: URL for image bytes or a file, so every transport (even remote HTTP) can receive it."""
    data = image if isinstance(image, bytes) else Path(image).read_bytes()
    mime = next((m for magic, m in MAGIC if data.startswith(magic)), "application/octet-stream")
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


class ToolClient:
    """An MCP client to one trompe server; use `async with`. Build it with in_process/stdio/http."""

    mode = "auto"  # the SDK's protocol negotiation; "legacy" forces the initialize handshake

    def __init__(self, target: Any, *, app: Any = None, default_tags: list[str] | None = None,
                 label: str = ""):
        self._target = target
        self._app = app  # in-process server we own and must close
        self._token: str | None = None
        self._stack: AsyncExitStack | None = None
        self._client: Client | None = None
        self._tools: list[Tool] | None = None  # this connection's tools/list, until tools/list_changed
        self.default_tags = default_tags
        self.label = label

    @classmethod
    def in_process(cls, config: Any = None) -> ToolClient:
        """Start the server's app inside this process (the default: no subprocess, no port)."""
        from trompe_server.app import ServerConfig, create_app

        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        app = create_app(config or ServerConfig())
        # MCPServer calls logging.basicConfig(INFO): in the user's process that would print every HTTP request the
        # vendor SDKs make, so leave the user's logging as it was.
        root.handlers[:] = handlers
        root.setLevel(level)
        # A tool error already reaches the model and the trace; don't also print it on the user's terminal.
        logging.getLogger("mcp.server.mcpserver.server").setLevel(logging.WARNING)
        return cls(app.mcp, app=app, label="in-process")

    @classmethod
    def stdio(cls, command: str | list[str]) -> ToolClient:
        """Run a server command (e.g. 'trompe-server --tools core') as a subprocess speaking stdio."""
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("server command is empty; give e.g. --server-cmd 'trompe-server --tools core'")
        return cls(StdioServerParameters(command=argv[0], args=argv[1:]), label=" ".join(argv))

    @classmethod
    def http(cls, url: str, token: str | None = None) -> ToolClient:
        """Connect to `trompe-server --http` at a URL such as http://127.0.0.1:8765/mcp."""
        client = cls(url, label=url)
        client._token = token
        return client

    async def _connect_target(self) -> Any:
        """What mcp.Client connects to; with a token, an HTTP transport that sends it on every request."""
        if not self._token:
            return self._target
        from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

        http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {self._token}"})
        await self._stack.enter_async_context(http_client)
        return streamable_http_client(self._target, http_client=http_client)

    async def __aenter__(self) -> Self:
        self._stack = AsyncExitStack()
        try:
            self._client = await self._stack.enter_async_context(
                Client(await self._connect_target(), message_handler=self._on_message, mode=self.mode))
        except Exception as exc:
            await self.__aexit__(None, None, None)
            raise ToolClientError(f"cannot reach the tool server ({self.label}): {_leaf_messages(exc)}; check "
                                  "--server-url/--server-cmd, and --token for a server that requires one") from exc
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._stack is not None:
            await self._stack.aclose()
        self._stack, self._client, self._tools = None, None, None
        if self._app is not None:
            self._app.registry.close()

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RuntimeError("ToolClient is not open; use `async with ToolClient...(...) as tools:`")
        return self._client

    async def _session_call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.client.call_tool(name, arguments)
        if result.is_error:
            raise ToolClientError(f"{name}: {_text(result.content)}")
        return result.structured_content or {}

    async def open_session(self, images: dict[str, Path | bytes]) -> SessionInfo:
        """Open a session: the first image starts it, the rest are added under their names."""
        if not images:
            raise ValueError("images is empty: give at least one, e.g. {'original': Path('q.png')}")
        items = iter(images.items())
        name, image = next(items)
        first = await self._session_call("open_session", {"source": image_data_url(image), "name": name})
        info = SessionInfo(first["session"], {first["image"]: (first["width"], first["height"])})
        try:
            for name, image in items:
                added = await self._session_call("add_image", {"session": info.id, "name": name,
                                                               "source": image_data_url(image)})
                info.sizes[added["image"]] = (added["width"], added["height"])
        except BaseException:
            await self.close_session(info.id)
            raise
        return info

    async def list_tools(self, tags: list[str] | None = None, allow: list[str] | None = None) -> list[ToolSchema]:
        """Tools the model may call: plugin tools with one of `tags` (plus list/view), restricted to `allow`."""
        tags = tags if tags is not None else self.default_tags
        tools = await self._server_tools()
        tags_of = {t.name: set((t.meta or {}).get("tags") or []) for t in tools}
        known = set().union(*tags_of.values()) - {"session"}
        if tags is not None and set(tags) - known:
            raise ToolClientError(f"tags: no tool has tag {', '.join(sorted(set(tags) - known))}; "
                                  f"the server's tools have: {', '.join(sorted(known))}")
        offered = {}
        for tool in tools:
            tool_tags = tags_of[tool.name]
            if "session" in tool_tags:
                keep = tool.name in MODEL_SESSION_TOOLS
            else:
                keep = tags is None or bool(tool_tags & set(tags))
            if keep:
                offered[tool.name] = tool
        if allow is not None:
            unknown = sorted(set(allow) - set(offered))
            if unknown:
                raise ToolClientError(f"allow: no such tool {', '.join(unknown)}; "
                                      f"available: {', '.join(sorted(offered))}")
            offered = {name: tool for name, tool in offered.items() if name in allow}
        return [ToolSchema(t.name, t.description or "", _without_session(t.input_schema))
                for t in offered.values()]

    async def _server_tools(self) -> list[Tool]:
        """Every page of tools/list, fetched once per connection: agents ask for it on every sample."""
        if self._tools is None:
            tools, cursor = [], None
            while True:
                page = await self.client.list_tools(cursor=cursor)
                tools += page.tools
                cursor = page.next_cursor
                if not cursor:
                    break
            self._tools = tools
        return self._tools

    async def _on_message(self, message: Any) -> None:
        """Forget the cached tool list when the server says it changed (handshake-era connections say so)."""
        if isinstance(message, ToolListChangedNotification):
            self._tools = None

    async def call(self, session: str, name: str, arguments: dict[str, Any]) -> ToolResultParts:
        """Run a tool with the session injected; errors come back as an is_error result, not an exception."""
        result = await self.client.call_tool(name, {**arguments, "session": session})
        structured = result.structured_content
        ids = [b.name for b in result.content if b.type == "resource_link"]
        fallback = (structured or {}).get("image") or name
        images = [ImagePart(ids[i] if i < len(ids) else fallback, base64.b64decode(b.data), b.mime_type)
                  for i, b in enumerate(b for b in result.content if b.type == "image")]
        return ToolResultParts(_text(result.content), images, bool(result.is_error), structured)

    async def image_png(self, session: str, image_id: str) -> bytes:
        """Full-size PNG of an image, read through the image:// resource."""
        result = await self.client.read_resource(f"image://{session}/{image_id}")
        return base64.b64decode(result.contents[0].blob)

    async def close_session(self, session: str) -> None:
        await self.client.call_tool("close_session", {"session": session})


def _leaf_messages(exc: BaseException) -> str:
    """The innermost errors of an exception group, joined: what actually went wrong."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_leaf_messages(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


def _text(content: list[Any]) -> str:
    return "\n".join(b.text for b in content if b.type == "text")


def _without_session(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema the model sees: `session` is the client's to fill in."""
    shown = dict(schema)
    shown["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k != "session"}
    if "required" in schema:
        shown["required"] = [r for r in schema["required"] if r != "session"]
    return shown
