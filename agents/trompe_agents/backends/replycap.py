"""A cap on the bytes of one vendor reply, hooked into the SDKs' httpx2 clients: a reply past it fails at once
instead of filling memory (a model's longest answer is well under 1 MB of JSON)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2

DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024


class ReplyTooLarge(Exception):
    """A reply body over the cap (`--backend-option max_reply_bytes=N`)."""


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
    """httpx2 `event_hooks` that refuse a reply announcing more than `cap` bytes and cut one that sends more."""

    async def check(response: httpx2.Response) -> None:
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > cap:
            raise ReplyTooLarge(f"the reply announces {length} bytes, over {cap} (--backend-option max_reply_bytes)")
        response.stream = _Capped(response.stream, cap)

    return {"response": [check]}


def too_large(exc: BaseException) -> ReplyTooLarge | None:
    """The ReplyTooLarge behind an SDK's error, if that is what it is."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None or isinstance(seen, ReplyTooLarge):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
