"""One in-memory MCP client kept open across a hypothesis test's examples (which are sync), on a portal's loop.

A client per example spent most of those tests on its handshake and on building its output-schema validators
again; a user's client stays open across calls, so one client per test checks the same thing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from PIL import Image

from imagekit import data_url

T = TypeVar("T")


class Live(NamedTuple):
    """A client of the app and the portal whose event loop it lives on."""
    portal: BlockingPortal
    client: Client

    def run(self, scenario: Callable[[Client], Awaitable[T]]) -> T:
        """Run `scenario(client)` on the client's loop and return its result."""
        return self.portal.call(scenario, self.client)

    def open(self, im: Image.Image) -> str:
        """Open a session on `im`; returns its id."""
        async def opened(client: Client) -> str:
            result = await client.call_tool("open_session", {"source": data_url(im)})
            assert not result.is_error, result.content[0].text
            return result.structured_content["session"]
        return self.run(opened)


@contextmanager
def live_client(app) -> Iterator[Live]:
    """A client of `app` open until the block ends."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(app.mcp)) as client:
        yield Live(portal, client)
