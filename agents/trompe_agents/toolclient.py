"""Talk to a trompe server (in-process, stdio subprocess or HTTP) in the neutral message model.

A server in this process is called directly (trompe_server.inprocess: the same handlers, validation, errors and
results as over MCP, without JSON-RPC or base64); `ToolClient.in_process(mcp=True)` and every other server go
through the MCP SDK's client (toollinks.py).

A connection that breaks (a replica killed, a balancer dropping it, a hung replica's call past the per-call
deadline) is replaced by a new one, to the next replica when several URLs are given, and the request sent again
with the same request id, which the server uses to answer a call it already stored
with what it stored. Failures of the server's side (the session is gone, its registry is down, no replica
answers) raise ToolInfrastructureError: they fail the sample instead of reaching the model as a tool error.

The client also remembers every image id the server handed it in each session. A server that later does not
know one of them, or hands one out again, has lost state (its Redis came back from an older snapshot, or a
failover went to a lagging replica): that too is a ToolInfrastructureError, never the model's mistake.
"""

from __future__ import annotations

import logging
import secrets
import shlex
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

import anyio
import pybase64
from trompe_server.pixel_segments import CAPABILITY as SHARED_PIXELS
from trompe_server.wire import FAILURE_META, REQUEST_META

from .failures import ErrorKind
from .messages import ImagePart, Message, TextPart, ToolSchema
from .toollinks import McpLink, ToolLink, image_bytes

if TYPE_CHECKING:  # mcp is imported where a connection is made: commands that open none start 0.4 s sooner
    from mcp import Client
    from mcp.types import Tool

logger = logging.getLogger(__name__)
T = TypeVar("T")

# Session tools the model may use itself; the others (open/add/close) are the client's business.
MODEL_SESSION_TOOLS = ("list_images", "view_image")
CALL_DEADLINE = 120.0  # seconds one HTTP tool call may take by default before it is sent again (--tool-timeout)
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


class ToolInfrastructureError(ToolClientError):
    """The tool server's side failed, not the model's arguments: the session was evicted or expired, the
    registry's storage is down, or no replica answered. The sample fails with this kind; --retry-errors reruns it."""

    kind = ErrorKind.TOOL_INFRASTRUCTURE

    def __init__(self, message: str, failure: str | None = None):
        super().__init__(message)
        self.failure = failure  # 'session': the server no longer has the session; 'lost': it lost some of its
        # images (it no longer lists one it handed out, or hands an id out twice); else None


@dataclass
class _Connection:
    """One connection, held open by a task of its own: its transport failing never cancels a caller."""

    link: ToolLink
    done: anyio.Event = field(default_factory=anyio.Event)  # set to close it, or once it has failed


@dataclass
class _LastTry:
    """A request's latest try: its connection and why it failed."""

    connection: _Connection | None = None
    why: str = ""


def image_data_url(image: Path | str | bytes) -> str:
    """A data: URL for image bytes or a file, so every transport (even remote HTTP) can receive it."""
    data = image if isinstance(image, bytes) else Path(image).read_bytes()
    mime = next((m for magic, m in MAGIC if data.startswith(magic)), "application/octet-stream")
    return f"data:{mime};base64,{pybase64.b64encode_as_string(data)}"


class ToolClient:
    """An MCP client to one trompe server; use `async with`. Build it with in_process/stdio/http."""

    mode = "auto"  # the SDK's protocol negotiation; "legacy" forces the initialize handshake
    retries = 4  # sends after the first, over a new connection when the old one broke (a replica died)
    retry_delay = 0.5  # seconds before the first resend, doubling: 7.5 s in all, a Redis restart's time
    shared_pixels = False  # ask a stdio server for images as sealed shared memory (pixel_segments.py)

    def __init__(self, target: Any, *, app: Any = None, default_tags: list[str] | None = None,
                 label: str = "", timeout: float | None = None, link: ToolLink | None = None):
        """`timeout`: seconds one request may take before its connection is replaced and it is sent again; `link`:
        a server in this process to call as it is (in_process), instead of MCP connections to `target`."""
        self._replicas = [target]  # each new connection after a failed one goes to the next (http with several)
        self._link = link
        self._turn = 0
        self._app = app  # in-process server we own and must close
        self._token: str | None = None
        self._stack: AsyncExitStack | None = None
        self._tasks: anyio.abc.TaskGroup | None = None  # holds each connection's task
        self._connection: _Connection | None = None
        self._connecting: anyio.Lock | None = None
        self._tools: list[Tool] | None = None  # this connection's tools/list, until tools/list_changed
        self._issued: dict[str, set[str]] = {}  # session -> the image ids the server handed out in it
        self.default_tags = default_tags
        self.label = label
        self.timeout = timeout

    @classmethod
    def in_process(cls, config: Any = None, *, mcp: bool = False) -> ToolClient:
        """Start the server's app inside this process (the default: no subprocess, no port), called directly, or
        with `mcp=True` through the MCP SDK's in-memory transport."""
        from trompe_server.app import ServerConfig, create_app
        from trompe_server.inprocess import InProcessServer

        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        app = create_app(config or ServerConfig())
        # MCPServer calls logging.basicConfig(INFO): in the user's process that would print every HTTP request the
        # vendor SDKs make, so leave the user's logging as it was.
        root.handlers[:] = handlers
        root.setLevel(level)
        # A tool error already reaches the model and the trace; don't also print it on the user's terminal.
        logging.getLogger("mcp.server.mcpserver.server").setLevel(logging.WARNING)
        return cls(app.mcp, app=app, label="in-process over MCP" if mcp else "in-process",
                   link=None if mcp else InProcessServer(app.mcp))

    @classmethod
    def stdio(cls, command: str | list[str], shared_pixels: bool = False) -> ToolClient:
        """Run a server command (e.g. 'trompe-server --tools core') as a subprocess speaking stdio; with
        `shared_pixels`, images come back as read-only mapped pixels (SharedImagePart) instead of PNG."""
        from mcp import StdioServerParameters

        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("server command is empty; give e.g. --server-cmd 'trompe-server --tools core'")
        client = cls(StdioServerParameters(command=argv[0], args=argv[1:]), label=" ".join(argv))
        client.shared_pixels = shared_pixels
        return client

    @classmethod
    def http(cls, url: str | Sequence[str], token: str | None = None,
             timeout: float | None = CALL_DEADLINE) -> ToolClient:
        """Connect to `trompe-server --http` at a URL such as http://127.0.0.1:8765/mcp, or to the first of several
        replicas' URLs (a list, or comma-separated); `timeout` is the per-call deadline.

        Replicas share their sessions (a Redis registry), so a call that fails or passes its deadline on one is
        sent again to the next: a hung replica costs a sample at most one deadline, never one per retry."""
        urls = [u.strip() for u in (url.split(",") if isinstance(url, str) else url) if u.strip()]
        if not urls:
            raise ValueError("--server-url is empty; give e.g. http://127.0.0.1:8765/mcp")
        client = cls(urls[0], label=", ".join(urls), timeout=timeout)
        client._replicas = urls
        client._token = token
        return client

    @property
    def _target(self) -> Any:
        """The server the next connection goes to."""
        return self._replicas[self._turn % len(self._replicas)]

    async def _connect_target(self, stack: AsyncExitStack) -> Any:
        """What mcp.Client connects to: a subprocess through the linear-time stdio reader, and with a token, an
        HTTP transport that sends it on every request."""
        from mcp import StdioServerParameters

        if isinstance(self._target, StdioServerParameters) and sys.platform != "win32":
            from .stdio_lines import linear_stdio_client

            return linear_stdio_client(self._target)
        if not self._token:
            return self._target
        from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

        http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {self._token}"})
        await stack.enter_async_context(http_client)
        return streamable_http_client(self._target, http_client=http_client)

    async def __aenter__(self) -> Self:
        self._stack = AsyncExitStack()
        self._connecting = anyio.Lock()
        try:
            self._tasks = await self._stack.enter_async_context(anyio.create_task_group())
            self._stack.callback(self._close_connection)  # runs first: the task group then waits for it to end
            self._connection = await self._tasks.start(self._hold)
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
        self._stack, self._tasks, self._connection, self._tools = None, None, None, None
        if self._app is not None:
            self._app.registry.close()

    def _close_connection(self) -> None:
        if self._connection is not None:
            self._connection.done.set()

    async def _hold(self, *, task_status: anyio.abc.TaskStatus[_Connection] = anyio.TASK_STATUS_IGNORED) -> None:
        """Open one connection and keep it until it is closed or fails; a failure only marks it done."""
        connection = None
        try:
            async with AsyncExitStack() as stack:
                connection = _Connection(await self._open_link(stack))
                task_status.started(connection)
                await connection.done.wait()
        except Exception as exc:
            if connection is None:
                raise  # to the opener, through TaskGroup.start
            logger.info("connection to the tool server (%s) failed: %s", self.label, _leaf_messages(exc))
        finally:
            if connection is not None:
                connection.done.set()

    async def _open_link(self, stack: AsyncExitStack) -> ToolLink:
        """The server in this process as it is, or a new MCP client connection to the target."""
        if self._link is not None:
            return self._link
        from mcp import Client, StdioServerParameters

        extensions = None
        if self.shared_pixels and isinstance(self._target, StdioServerParameters):  # same host: never over HTTP
            from .pixel_segments import extension

            extensions = [extension()]
        client = await stack.enter_async_context(
            Client(await self._connect_target(stack), message_handler=self._on_message, mode=self.mode,
                   read_timeout_seconds=self.timeout, extensions=extensions))
        return McpLink(client)

    async def _current(self) -> _Connection:
        """The open connection, or a new one (same server, same registry sessions) if the last one broke."""
        if self._tasks is None or self._connecting is None:
            raise RuntimeError("ToolClient is not open; use `async with ToolClient...(...) as tools:`")
        async with self._connecting:  # concurrent callers that saw it break share one new connection
            if self._connection is None or self._connection.done.is_set():
                if self._connection is not None:  # it broke or hung: the next replica, if there are several
                    self._turn += 1
                self._tools = None
                self._connection = await self._tasks.start(self._hold)
            return self._connection

    @property
    def client(self) -> Client:
        """The current connection's MCP client (requests sent on it directly are not retried)."""
        if self._connection is None:
            raise RuntimeError("ToolClient is not open; use `async with ToolClient...(...) as tools:`")
        if not isinstance(self._connection.link, McpLink):
            raise RuntimeError("a server in this process is called without an MCP client; build the ToolClient "
                               "with ToolClient.in_process(mcp=True) to talk MCP to it")
        return self._connection.link.client

    async def _request(self, what: str, send: Callable[[ToolLink], Awaitable[T]]) -> T:
        """Send, and resend over a new connection after a transport failure or while the registry is down.

        A session the server lost, no answer after every retry, or no answer within the call's deadline (one
        --tool-timeout per replica URL, resends included: with one balancer URL a resend may land on the same hung
        replica) is a ToolInfrastructureError. `send` must be safe to repeat: calls carry one request id on every
        try."""
        budget = self.timeout * len(self._replicas) if self.timeout else None
        last = _LastTry()
        with anyio.move_on_after(budget):
            return await self._send_until_answered(what, send, last)
        if last.connection is not None:
            last.connection.done.set()  # cut off mid-call, or failing: not trusted again
        raise ToolInfrastructureError(
            f"{what}: the tool server ({self.label}) did not answer within {budget:g} s, the call's deadline "
            f"(--tool-timeout {self.timeout:g} s for each of the {len(self._replicas)} URL(s) of --server-url; "
            f"listing every replica's URL lets a resend avoid a hung one){f'; last: {last.why}' if last.why else ''}")

    async def _send_until_answered(self, what: str, send: Callable[[ToolLink], Awaitable[T]], last: _LastTry) -> T:
        """_request's tries, noting each one's connection and failure in `last` for when its deadline cuts it."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        delay = self.retry_delay
        for attempt in range(self.retries + 1):
            if attempt:
                await anyio.sleep(delay)
                delay *= 2
            last.connection = None
            try:
                last.connection = await self._current()
                result = await send(last.connection.link)
            except MCPError as exc:
                failure = _failure(exc.error.data)
                if failure is None and exc.code not in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
                    raise  # the server's own answer, e.g. an unknown image
                last.why = exc.error.message if failure else _leaf_messages(exc)
            except Exception as exc:  # noqa: BLE001 -- the transport broke: a new connection, then again
                failure, last.why = None, _leaf_messages(exc)
            else:
                failure = _failure(getattr(result, "meta", None))
                if failure is None:
                    return result
                last.why = _text(result.content)
            if failure == "session":  # evicted or expired: no retry brings it back
                raise ToolInfrastructureError(f"{what}: the tool server lost this sample's session ({last.why})",
                                              failure)
            if failure is None and last.connection is not None:
                last.connection.done.set()  # not trusted again: its transport failed or the server hung
            logger.info("%s: try %d of %d failed (%s)", what, attempt + 1, self.retries + 1, last.why)
        raise ToolInfrastructureError(f"{what}: the tool server ({self.label}) failed {self.retries + 1} times; "
                                      f"last: {last.why}")

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """tools/call with a request id the server keeps with what the call stored, so a resend adds nothing."""
        meta = {REQUEST_META: secrets.token_urlsafe(18)}
        return await self._request(name, lambda link: link.call_tool(name, arguments, meta=meta))

    async def _session_call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self._call_tool(name, arguments)
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
        self._issued[info.id] = {first["image"]}
        try:
            for name, image in items:
                added = await self._session_call("add_image", {"session": info.id, "name": name,
                                                               "source": image_data_url(image)})
                self._keep_issued(info.id, "add_image", added["image"])
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
                page = await self._request("tools/list", lambda link, at=cursor: link.list_tools(cursor=at))
                tools += page.tools
                cursor = page.next_cursor
                if not cursor:
                    break
            self._tools = tools
        return self._tools

    async def _on_message(self, message: Any) -> None:
        """Forget the cached tool list when the server says it changed (handshake-era connections say so)."""
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._tools = None

    async def call(self, session: str, name: str, arguments: dict[str, Any]) -> ToolResultParts:
        """Run a tool with the session injected; the model's errors come back as an is_error result, the
        server's (session lost, images lost, registry down, no replica answering) as ToolInfrastructureError."""
        result = await self._call_tool(name, {**arguments, "session": session})
        structured = result.structured_content
        await self._check_kept(session, name, result)
        ids = [b.name for b in result.content if b.type == "resource_link"]
        fallback = (structured or {}).get("image") or name
        if isinstance((result.meta or {}).get(SHARED_PIXELS), Mapping):  # mapped pixels, not a PNG
            from .pixel_segments import shared_parts

            images = await shared_parts(result, lambda image: self.image_png(session, image))
        else:
            images = [ImagePart(ids[i] if i < len(ids) else fallback, image_bytes(b), b.mime_type)
                      for i, b in enumerate(b for b in result.content if b.type == "image")]
        return ToolResultParts(_text(result.content), images, bool(result.is_error), structured)

    async def _check_kept(self, session: str, name: str, result: Any) -> None:
        """Raise when the server has lost images it handed out in this session; note the one a call made.

        An error result (e.g. "unknown image") is checked against a listing of the session: an error about an
        image the server itself made is the server's loss, which the model must never be shown as its own."""
        structured = result.structured_content or {}
        if result.is_error:
            await self._check_still_kept(session, name)
        elif name == "list_images":
            self._check_listed(session, name, structured)
        elif structured.get("created") and isinstance(image := structured.get("image"), str):
            self._keep_issued(session, name, image)

    async def _check_still_kept(self, session: str, name: str) -> None:
        """After an error about this session: raise if a listing shows the server lost images it handed out."""
        listing = await self._call_tool("list_images", {"session": session})
        if not listing.is_error:
            self._check_listed(session, name, listing.structured_content or {})

    def _check_listed(self, session: str, name: str, listing: dict[str, Any]) -> None:
        listed = {i.get("id") for i in listing.get("images") or [] if isinstance(i, Mapping)}
        if lost := self._issued.get(session, set()) - listed:
            raise self._lost(name, f"it no longer has {', '.join(sorted(lost))}")

    def _keep_issued(self, session: str, name: str, image: str) -> None:
        """Note an id the server made; one it made before in this session means it forgot the first."""
        issued = self._issued.setdefault(session, set())
        if image in issued:
            raise self._lost(name, f"it handed out {image} a second time")
        issued.add(image)

    def _lost(self, name: str, what: str) -> ToolInfrastructureError:
        return ToolInfrastructureError(
            f"{name}: the tool server lost images it had stored for this sample ({what}): its registry came back "
            "with older state (Redis restarted from an older snapshot, or a failover to a lagging replica)", "lost")

    async def image_png(self, session: str, image_id: str) -> bytes:
        """Full-size PNG of an image, read through the image:// resource; a read refused because the server lost
        an image it handed out is a ToolInfrastructureError, as a tool call's error is (_check_kept)."""
        from mcp.shared.exceptions import MCPError

        uri = f"image://{session}/{image_id}"
        try:
            return await self._request(f"read {uri}", lambda link: link.read_png(uri))
        except MCPError:
            await self._check_still_kept(session, f"read {uri}")
            raise

    async def close_session(self, session: str) -> None:
        """Free the session; if the server cannot be reached it expires there by itself (--idle-timeout)."""
        self._issued.pop(session, None)
        try:
            await self._call_tool("close_session", {"session": session})
        except ToolInfrastructureError as exc:
            if exc.failure == "session":
                return  # already gone (evicted or expired): nothing left to free
            logger.warning("session %s was not closed; it expires on the server by itself: %s", session, exc)


def _failure(meta: Any) -> str | None:
    """'session' or 'registry' when the server says its side failed (wire.FAILURE_META), else None."""
    value = meta.get(FAILURE_META) if isinstance(meta, Mapping) else None
    return str(value) if value else None


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
