"""Checks on every vendor reply, hooked into the SDKs' httpx2 clients: a reply past a byte cap fails at once
instead of filling memory (a model's longest answer is well under 1 MB of JSON), and a redirect fails instead of
being followed (following one re-sends the prompt and its images to whatever address the reply names)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2

from .tls import shared_context

DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024


class RefusedReply(Exception):
    """A vendor reply the client will not read: its message says why."""


class ReplyTooLarge(RefusedReply):
    """A reply body over the cap (`--backend-option max_reply_bytes=N`)."""


class VendorRedirect(RefusedReply):
    """A redirect: the request is not sent again to the address it names."""


class _Capped(httpx2.AsyncByteStream):
    """The body stream, counted as it is read."""

    def __init__(self, stream: Any, cap: int):
        self.stream, self.cap = stream, cap

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.stream:
            seen += len(chunk)
            if seen > self.cap:
                raise ReplyTooLarge(f"the reply is over {self.cap} bytes (--backend-option max_reply_bytes)")
            yield chunk

    async def aclose(self) -> None:
        await self.stream.aclose()


def event_hooks(cap: int) -> dict[str, list[Callable[[httpx2.Response], Awaitable[None]]]]:
    """httpx2 `event_hooks` that refuse a redirect and a reply announcing more than `cap` bytes, and cut one that
    sends more."""

    async def check(response: httpx2.Response) -> None:
        if response.is_redirect:
            raise VendorRedirect(f"the vendor answered {response.status_code} {response.reason_phrase}, a redirect "
                                 f"to {response.headers.get('location', '(no address)')!r}; vendor redirects are "
                                 "never followed (the prompt and images would go to that address): set --base-url "
                                 "to the address that answers itself")
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > cap:
            raise ReplyTooLarge(f"the reply announces {length} bytes, over {cap} (--backend-option max_reply_bytes)")
        response.stream = _Capped(response.stream, cap)

    return {"response": [check]}


def refused_reply(exc: BaseException) -> RefusedReply | None:
    """The RefusedReply behind an SDK's error, if that is what it is."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None or isinstance(seen, RefusedReply):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def client_settings(cap: int) -> dict[str, Any]:
    """The keyword arguments every vendor's httpx2 client is made with: these checks (`cap`: the
    `max_reply_bytes` setting), the shared TLS context, and redirects not followed (the checks refuse one first;
    this holds should a hook be dropped)."""
    return {"event_hooks": event_hooks(cap), "verify": shared_context(), "follow_redirects": False}
