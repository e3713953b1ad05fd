"""Helpers for the built-in tool tests: call a tool, read its pixels, check a refusal left nothing behind."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import numpy as np
from mcp import Client
from PIL import Image

from imagekit import data_url, gradient, result_image  # noqa: F401  (used by the tool tests)


async def call(client: Client, session: str, tool: str, **arguments):
    """Call a tool that must succeed; returns the MCP result."""
    result = await client.call_tool(tool, {"session": session, **arguments})
    assert not result.is_error, result.content[0].text
    return result


async def pixels(client: Client, session: str, tool: str, **arguments) -> tuple[np.ndarray, dict]:
    """The image a tool returns, as an array, with its structured content."""
    result = await call(client, session, tool, **arguments)
    return np.asarray(result_image(result)), result.structured_content


async def listing(client: Client, session: str) -> list[dict]:
    result = await client.call_tool("list_images", {"session": session})
    return result.structured_content["images"]


async def refused(client: Client, session: str, tool: str, argument: str, *phrases: str, **arguments) -> str:
    """Call a tool that must fail naming `argument` (and the phrases), leaving the session unchanged."""
    before = await listing(client, session)
    result = await client.call_tool(tool, {"session": session, **arguments})
    text = result.content[0].text
    assert result.is_error, text
    assert re.search(rf"(^|\s){re.escape(argument)}(:|\n)", text), text
    for phrase in phrases:
        assert phrase in text, text
    assert await listing(client, session) == before
    return text


def in_memory(app, scenario):
    """Run `scenario(client)` against the app in a fresh event loop (for hypothesis tests, which are sync)."""
    async def main():
        async with Client(app.mcp) as client:
            return await scenario(client)
    return anyio.run(main)


def open_in(app, im: Image.Image) -> str:
    """Open a session on `im` outside an async test; returns its id."""
    async def scenario(client):
        result = await client.call_tool("open_session", {"source": data_url(im)})
        return result.structured_content["session"]
    return in_memory(app, scenario)


def patches(size: tuple[int, int], background: tuple[int, int, int],
            rects: list[tuple[tuple[int, int, int, int], tuple[int, int, int]]]) -> Image.Image:
    """An image of flat rectangles [x0, y0, x1, y1) on a background: known colours at known places."""
    arr = np.empty((size[1], size[0], 3), np.uint8)
    arr[:] = background
    for (x0, y0, x1, y1), rgb in rects:
        arr[y0:y1, x0:x1] = rgb
    return Image.fromarray(arr)


@asynccontextmanager
async def session_on(app, im: Image.Image | None = None) -> AsyncIterator[tuple[Client, str]]:
    """A client of `app` (e.g. one built with tight limits) and a session on `im` (default: the gradient)."""
    async with Client(app.mcp) as client:
        opened = await client.call_tool("open_session", {"source": data_url(im or gradient())})
        yield client, opened.structured_content["session"]
