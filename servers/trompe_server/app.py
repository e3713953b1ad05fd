"""The MCP server: session tools, plugin tools wrapped with `session`, and the image resource."""

from __future__ import annotations

import functools
import hashlib
import inspect
import logging
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, CompleteRequestParams, CompleteResult, ResourceLink, TextContent
from mcp.types import INTERNAL_ERROR, ToolAnnotations
from PIL import Image
from pydantic import BaseModel, Field, ValidationError
from pydantic_core import to_jsonable_python
from trompe_kernel import __version__
from trompe_kernel.manager import PluginSettings, Plugins

from .admission import PIXEL_BYTES, REPLY_COPIES, WORK_FACTOR, trim_heap
from .argcheck import describe_non_finite, describe_validation
from .completions import IMAGE_TEMPLATE, complete
from .errors import ServerFault, ToolInputError
from .encode import encode_png, preview, preview_size
from .imageio import decode_image, is_inline, read_source, to_rgb
from .lineage_app import APP_MIME_TYPE, LINEAGE_URI, RESOURCE_META, TOOL_META, lineage_view
from .limits import Limits
from .mcp_prompts import server_prompts
from .pixel_blocks import drop_freed_blocks
from .pixel_segments import CAPABILITY, Segments, declared
from .plugins import collect_tools
from .pngblock import image_block
from .registry import LOCAL_CLIENT, ImageRecord, Registry
from .reply_png import reply_png
from .roots import server_roots
from .stdio_pipes import stdio_streams
from .storages import open_storage
from .tool_schemas import described
from .toolapi import Cancelled, Progress, ToolContext, ToolOutput, ToolSpec
from .wire import FAILURE_META, request_id

logger = logging.getLogger(__name__)
SessionId = Annotated[str, Field(description="session id returned by open_session")]
INSTRUCTIONS = """Image tools over an immutable registry. open_session(source) loads an image as 'original'
and returns a session id; every tool takes that session and image ids, and writes its result as a new image
img_001, img_002, ... Nothing is modified in place, so any earlier image can be reused. Coordinates are pixels
of the referenced image; boxes are [x0, y0, x1, y1]."""
# Lists that stay as they are for a server's whole life, the same for every client: a client may keep them an hour.
CACHE_HINTS = {method: CacheHint(ttl_ms=3_600_000, scope="public")
               for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list",
                              "server/discover")}


class ImageResult(BaseModel):
    """Metadata of a tool result; the pixels travel as image content or via the resource link."""

    image: str = Field(description="id of the new image, or of the image read when nothing new was made")
    created: bool = Field(description="whether the call stored a new image")
    width: int
    height: int
    parents: list[str]
    preview: list[int] | None = Field(None, description="[w, h] of the downscaled preview sent, if any")
    data: dict[str, Any] | None = Field(None, description="tool-specific measurements (never pixels)")


class SessionImage(BaseModel):
    session: str
    image: str
    width: int
    height: int


class ImageList(BaseModel):
    session: str
    images: list[dict[str, Any]]


class TrompeMCP(MCPServer):
    """The SDK's server with argument errors in the project's style instead of raw pydantic text."""

    async def run_stdio_async(self) -> None:
        """Serve over stdio with the event loop writing the pipes itself, no worker thread per message
        (stdio_pipes.py)."""
        async with stdio_streams() as (read_stream, write_stream):
            await self._lowlevel_server.run(read_stream, write_stream,
                                            self._lowlevel_server.create_initialization_options())

    def on_complete(self, handler) -> None:
        """Serve `completion/complete` with the request's context (the SDK's decorator passes none: whose
        sessions may be listed depends on who asks)."""
        self._lowlevel_server.add_request_handler("completion/complete", CompleteRequestParams, handler)

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            raise ToolError(unknown_tool(name, [t.name for t in self._tool_manager.list_tools()]))
        schema = tool.parameters if tool is not None else {}
        if tool is not None and (message := describe_non_finite(name, arguments, schema)):
            raise ToolError(message)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(describe_validation(name, exc.__cause__, schema)) from exc.__cause__
            if isinstance(exc.__cause__, ServerSideError):  # the same text, and _meta saying whose fault it is
                return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True,
                                      _meta={FAILURE_META: exc.__cause__.failure})
            raise


def fault_error(fault: ServerFault, **data: str) -> MCPError:
    """A request other than a tool call failed by the server's own state: JSON-RPC's internal error, its data
    saying which failure (as a tool error's `_meta` does), never the caller's invalid parameters."""
    return MCPError(INTERNAL_ERROR, str(fault), {**data, FAILURE_META: fault.failure})


class ServerSideError(ToolError):
    """A tool error that is the server's doing (session gone, registry down), not the caller's arguments."""

    def __init__(self, message: str, failure: str):
        super().__init__(message)
        self.failure = failure


@dataclass
class ServerConfig:
    """Everything that shapes one server: limits, readable roots, which plugins and tags to expose."""

    limits: Limits = field(default_factory=Limits)
    # the working directory unless it is /, a home folder or a system folder (roots.py): then inline images only
    roots: list[Path] = field(default_factory=lambda: server_roots(None, Path.cwd(), Path.home())[0])
    plugins: list[str] | None = None
    tags: list[str] | None = None
    extra_plugins: dict[str, Any] = field(default_factory=dict)  # name -> object with @hookimpl functions
    strict_plugins: bool | None = None  # a plugin that fails to import stops start-up (None: TROMPE_STRICT_PLUGINS)
    plugin_settings: PluginSettings = field(default_factory=PluginSettings)  # how messages name the settings
    registry: str = "memory"  # registry storage: memory, or redis://HOST:PORT/DB shared by replicas
    visual_prompts: list[Path] = field(default_factory=list)  # saved SEVEX prompt folders offered as MCP prompts
    same_host_pixels: bool = False  # offer raw pixels in sealed memfds (pixel_segments.py); stdio only (cli.py)


class TrompeApp:
    """One server instance: the MCP server object plus the registry and tools behind it."""

    def __init__(self, config: ServerConfig | None = None):
        self.config = config or ServerConfig()
        # plugins first: a start-up error then leaves no spill folder
        self.plugins = Plugins(self.config.plugins, self.config.extra_plugins, self.config.strict_plugins,
                               self.config.plugin_settings)
        self.tools = collect_tools(self.plugins, self.config.tags)
        prompts = server_prompts(self.config.visual_prompts)  # a bad folder is refused before any state is made
        storage = open_storage(self.config.registry, self.config.limits, self.plugins)
        self.registry = Registry(self.config.limits, storage)
        self.segments = Segments(self.config.limits.memory_budget // 2, self.registry.session_ids,
                                 self.registry.pin) if self.config.same_host_pixels else None
        tools = [*self._session_tools(), *map(self._plugin_tool, self.tools.values())]  # names unique: collect_tools
        self.mcp = TrompeMCP("trompe", instructions=INSTRUCTIONS, version=__version__, tools=tools,
                             cache_hints=CACHE_HINTS)
        self.mcp.resource(IMAGE_TEMPLATE, name="image", mime_type="image/png",
                          description="PNG bytes of an image in a session")(self._read_image)
        self.mcp.resource(LINEAGE_URI, name="session_lineage", title="Session images and their lineage",
                          mime_type=APP_MIME_TYPE, meta=RESOURCE_META,
                          description="MCP App: the session's images as a strip with how each was made, each "
                                      "opened full size (shown beside list_images)")(lineage_view)
        for prompt in prompts:
            self.mcp.add_prompt(prompt)
        self.mcp.on_complete(self._complete)

    async def _complete(self, request: ServerRequestContext, params: CompleteRequestParams) -> CompleteResult:
        """Session and image ids for a client's completion box (completions.py says whose)."""
        local = client_of(request.request) == LOCAL_CLIENT
        try:
            return CompleteResult(completion=await anyio.to_thread.run_sync(complete, self.registry, params, local))
        except ServerFault as exc:
            raise fault_error(exc) from None

    # results ---------------------------------------------------------------
    def _shares_pixels(self, ctx: Context | None) -> bool:
        """Whether this call's reply may hand over a pixel segment: a stdio server, a client that asked."""
        return self.segments is not None and ctx is not None and declared(ctx.client_capabilities)

    def image_result(self, session: str, record: ImageRecord, summary: str, created: bool,
                     data: dict[str, Any] | None = None, im: Image.Image | None = None,
                     shared: bool = False) -> CallToolResult:
        """Text line + PNG (preview above max_preview_side) + resource link + metadata-only structure; for a
        client that asked for shared pixels, the full-size pixels in a sealed segment (_meta) instead of the PNG."""
        im = self.registry.pixels(session, record) if im is None else im
        max_side = self.config.limits.max_preview_side
        segment = self.segments.publish(session, record.id, im) if shared and self.segments else None
        shown = None if segment else preview(im, max_side)
        if shown is not None:
            self.registry.work.reserve(REPLY_COPIES * PIXEL_BYTES * shown.width * shown.height)  # encoding buffers
        size = shown.size if shown else preview_size(im.size, max_side)  # what the model is shown either way
        downscaled = size != im.size
        note = (f" [preview downscaled to {size[0]}x{size[1]}; full {im.width}x{im.height} kept "
                f"as {record.id}, coordinates refer to the full size]") if downscaled else ""
        text = f"{record.id} {record.width}x{record.height}: {summary}{note}"
        uri = f"image://{session}/{record.id}"
        meta = ImageResult(image=record.id, created=created, width=record.width, height=record.height,
                           parents=list(record.parents), data=data,
                           preview=list(size) if downscaled else None)
        link = ResourceLink(type="resource_link", uri=uri, name=record.id, mime_type="image/png")
        if segment:
            return CallToolResult(content=[TextContent(type="text", text=text), link],
                                  structured_content=meta.model_dump(), _meta={CAPABILITY: segment.describe(max_side)})
        return CallToolResult(
            content=[TextContent(type="text", text=text),
                     image_block(reply_png(shown)),
                     link],
            structured_content=meta.model_dump(),
        )

    def _finish(self, spec: ToolSpec, ctx: ToolContext, out: ToolOutput, arguments: dict[str, Any],
                request: str | None = None, shared: bool = False):
        if out.image is None:
            first = ctx.parents[0] if ctx.parents else None
            record = self.registry.record(ctx.session, first) if first else None
            meta = ImageResult(image=first or "", created=False, width=record.width if record else 0,
                               height=record.height if record else 0, parents=list(ctx.parents), data=out.data)
            return CallToolResult(content=[TextContent(type="text", text=out.summary)],
                                  structured_content=meta.model_dump())
        im = to_rgb(out.image)
        record = self.registry.add_output(ctx.session, im, spec.name, arguments, tuple(ctx.parents), request)
        return self.image_result(ctx.session, record, out.summary, created=True, data=out.data, im=im, shared=shared)

    # plugin tools -----------------------------------------------------------
    def _plugin_tool(self, spec: ToolSpec) -> Tool:
        return described(self._wrap(spec), spec.fn, name=spec.name, description=spec.fn.__doc__,
                         meta={"tags": sorted(spec.tags), "plugin": spec.plugin},
                         annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                     idempotent_hint=False, open_world_hint=False))

    def _wrap(self, spec: ToolSpec):
        """An async MCP handler with `session` first and the plugin function's own typed arguments."""
        hints = typing.get_type_hints(spec.fn, include_extras=True)
        own = list(inspect.signature(spec.fn).parameters.values())[1:]
        params = [inspect.Parameter("session", inspect.Parameter.KEYWORD_ONLY, annotation=SessionId)]
        params += [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints.get(p.name, p.annotation))
                   for p in own]
        returns = Annotated[CallToolResult, ImageResult]

        async def handler(**kwargs: Any) -> CallToolResult:
            session, ctx = kwargs.pop("session"), kwargs.pop(CONTEXT_ARGUMENT)
            arguments, line = to_jsonable_python(kwargs), progress_line(ctx)
            return await self._run(functools.partial(self._call, spec, session, kwargs, arguments,
                                                     _request_meta(ctx), line, self._shares_pixels(ctx)), line)

        params.append(inspect.Parameter(CONTEXT_ARGUMENT, inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation=Context | None))  # the SDK fills it in; not in the schema
        handler.__signature__ = inspect.Signature(params, return_annotation=returns)
        handler.__annotations__ = {p.name: p.annotation for p in params} | {"return": returns}
        handler.__name__ = spec.name
        handler.__doc__ = spec.fn.__doc__
        return handler

    def _call(self, spec: ToolSpec, session: str, kwargs: dict[str, Any], arguments: dict[str, Any],
              meta: dict[str, Any] | None = None, line: Progress | None = None, shared: bool = False):
        request = request_id(meta)
        self.registry.touch(session)  # unknown session is the first error a caller should see
        ctx = ToolContext(self.registry, session, copies=spec.copies, line=line or Progress())
        out = spec.fn(ctx, **kwargs)
        ctx.line.check()  # a call cancelled while it worked stores nothing
        return self._finish(spec, ctx, out, arguments, request, shared)

    def _released(self, work):
        """Run one call's work in this thread, then hand back the memory it reserved."""
        try:
            return work()
        finally:
            self.registry.work.release()

    async def _run(self, work, line: Progress | None = None):
        """Blocking image work off the event loop; input errors and plugin bugs become MCP tool errors.

        With a progress line, a cancelled call returns at once and its thread stops at its next progress point
        (toolapi.Progress), storing nothing; its reserved memory is handed back when the thread ends."""
        try:
            return await anyio.to_thread.run_sync(functools.partial(self._released, work),
                                                  abandon_on_cancel=line is not None)
        except anyio.get_cancelled_exc_class():
            if line is not None:
                line.cancelled.set()
            raise
        except Cancelled:
            raise ToolError("cancelled by the caller; nothing was stored") from None
        except ServerFault as exc:
            raise ServerSideError(str(exc), exc.failure) from None
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:  # a plugin bug: say what broke (the traceback goes to the log), carry on
            logger.exception("tool failed unexpectedly")
            raise ToolError(f"the tool failed unexpectedly ({type(exc).__name__}: {exc}); nothing was stored, "
                            "the session is unchanged") from None

    # session tools ----------------------------------------------------------
    def _load(self, source: str, argument: str = "source"):
        limits = self.config.limits
        data = read_source(source, self.config.roots, limits.max_source_bytes, argument)
        return decode_image(data, limits.max_pixels, argument, admit=self.registry.work.admit_decode)

    @staticmethod
    def _source_label(source: str) -> str:
        return f"<inline image, {len(source)} characters>" if is_inline(source) else source

    def _session_tools(self) -> list[Tool]:
        registry = self.registry

        async def open_session(
            source: Annotated[str, Field(description="image file path under the server's roots, a data: URL "
                                                     "or base64 image bytes")],
            name: Annotated[str, Field(description="id to give the image")] = "original",
            ctx: Context | None = None,
        ) -> Annotated[CallToolResult, SessionImage]:
            """Start a session with one image; returns the session id every other tool needs."""
            client, meta = client_key(ctx), _request_meta(ctx)

            def work():
                request = request_id(meta)
                session, record = registry.open_session(client, name, self._load(source), self._source_label(source),
                                                        request)
                return _session_image(session, record, f"session {session}: {record.id} "
                                      f"{record.width}x{record.height}")
            return await self._run(work)

        async def add_image(
            session: SessionId,
            source: Annotated[str, Field(description="image file path under the roots, data: URL or base64")],
            name: Annotated[str, Field(description="id to give the image, e.g. 'image_2'")],
            ctx: Context | None = None,
        ) -> Annotated[CallToolResult, SessionImage]:
            """Add another input image to a session under a name of your choice."""
            meta = _request_meta(ctx)

            def work():
                request = request_id(meta)
                registry.touch(session)  # before reading the source: a gone session is the error
                record = registry.add_input(session, name, self._load(source), self._source_label(source), request)
                return _session_image(session, record, f"added {record.id} {record.width}x{record.height}")
            return await self._run(work)

        async def list_images(session: SessionId) -> Annotated[CallToolResult, ImageList]:
            """List every image of the session with its size and lineage (how it was made, from what)."""
            def work():
                records = registry.records(session)
                lines = [f"{r.id} {r.width}x{r.height} {r.operation}"
                         + (f" of {', '.join(r.parents)}" if r.parents else "") for r in records]
                return CallToolResult(content=[TextContent(type="text", text="\n".join(lines))],
                                      structured_content=ImageList(session=session, images=[
                                          to_jsonable_python(r.describe()) for r in records]).model_dump())
            return await self._run(work)

        async def view_image(session: SessionId, image: Annotated[str, Field(description="image id")],
                             ctx: Context | None = None) -> Annotated[CallToolResult, ImageResult]:
            """Look at an image of the session again without creating a new one."""
            shared = self._shares_pixels(ctx)

            def work():
                record = registry.record(session, image)
                return self.image_result(session, record, f"view of {record.operation} image", created=False,
                                         shared=shared)
            return await self._run(work)

        async def close_session(session: SessionId) -> str:
            """Free a session and all its images; its id stops working."""
            def work():
                try:
                    freed = registry.close_session(session)
                finally:  # closed, or already gone: its segments go either way
                    if self.segments is not None:
                        self.segments.drop_session(session)
                drop_freed_blocks()
                trim_heap()
                return f"closed {session} ({freed} images freed)"
            return await self._run(work)

        def meta(fn) -> dict[str, Any]:  # list_images opens the lineage app in a host that renders MCP Apps
            return {"tags": ["session"], "plugin": "trompe_server"} | (TOOL_META if fn is list_images else {})

        return [described(fn, fn.__code__, meta=meta(fn))
                for fn in (open_session, add_image, list_images, view_image, close_session)]  # plugins.SERVER_TOOLS

    async def _read_image(self, session: str, image: str) -> bytes:
        def work():  # a full-size read holds the pixels and their PNG: admitted like a tool's work
            try:
                record = self.registry.record(session, image, "image")
                self.registry.work.reserve(WORK_FACTOR * PIXEL_BYTES * record.width * record.height)
                return encode_png(self.registry.pixels(session, record))
            except ServerFault as exc:
                raise fault_error(exc, uri=f"image://{session}/{image}") from None
            except ToolInputError as exc:
                raise ResourceNotFoundError(str(exc)) from None
        return await anyio.to_thread.run_sync(functools.partial(self._released, work))


CONTEXT_ARGUMENT = "mcp_context"  # the MCP context a plugin tool's handler receives (for its request's _meta)


def progress_line(ctx: Context | None) -> Progress:
    """A tool call's progress line: its reports become MCP progress notifications (sent only when the caller gave
    a progress token), sent from the worker thread through the event loop; outside a request, a silent one."""
    if ctx is None:
        return Progress()

    def report(done: float, total: float | None, message: str) -> None:
        anyio.from_thread.run(functools.partial(ctx.report_progress, done, total, message or None))

    return Progress(report)


def _request_meta(ctx: Context | None) -> dict[str, Any] | None:
    """The request's `_meta`, where a client's request id travels (wire.REQUEST_META); None outside a request."""
    try:
        return ctx.request_context.meta if ctx is not None else None
    except ValueError:  # a context made outside a request
        return None


def unknown_tool(name: str, known: list[str]) -> str:
    """The error for a tool name nobody registered, spelled so an invisible or lookalike character shows."""
    visible = "".join(c for c in name if c.isascii() and c.isprintable())
    hint = "" if visible == name else " (it has characters outside printable ASCII, which no tool name has" + (
        f"; did you mean {visible!r}?)" if visible in known else ")")
    return f"unknown tool {ascii(name)}{hint}; this server has: {', '.join(sorted(known))}"


def client_key(ctx: Context | None) -> str:
    """Whose quota a new session counts against: the bearer token's, else the MCP transport session's, else
    the TCP connection's (clients of the sessionless protocol); stdio and in-memory have one client.

    Never the address alone: every local client shares 127.0.0.1, so one's opens would evict another's."""
    return client_of(ctx.request_context.request if ctx is not None else None)


def client_of(request: Any) -> str:
    """client_key of a request as the transport gave it (an HTTP request, or None over stdio and in-process)."""
    headers = getattr(request, "headers", None) or {}
    if authorization := headers.get("authorization"):  # the token alone: the scheme's case is free (http.py)
        return "token:" + hashlib.sha256(authorization.partition(" ")[2].encode()).hexdigest()[:16]
    if transport := headers.get("mcp-session-id"):
        return f"transport:{transport}"
    peer = getattr(request, "client", None)
    return f"connection:{peer.host}:{peer.port}" if peer else LOCAL_CLIENT


def _session_image(session: str, record: ImageRecord, text: str) -> CallToolResult:
    meta = SessionImage(session=session, image=record.id, width=record.width, height=record.height)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=meta.model_dump())


def create_app(config: ServerConfig | None = None) -> TrompeApp:
    return TrompeApp(config)
