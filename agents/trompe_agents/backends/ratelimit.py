"""`--rate-limit`: requests of all concurrent samples spaced so no more than N start in any minute."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .base import Backend


class RateLimiter:
    """Spaces requests so no more than `per_minute` start in any minute (shared by all concurrent samples)."""

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        """`clock` and `sleep` are the monotonic clock and asyncio's sleep; tests pass a clock they move."""
        if per_minute <= 0:
            raise ValueError(f"rate limit must be > 0 requests per minute, got {per_minute}")
        self.interval = 60.0 / per_minute
        self._next = 0.0
        self._lock = asyncio.Lock()
        self._clock, self._sleep = clock, sleep

    async def wait(self) -> None:
        async with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval
        await self._sleep(start - now)


class RateLimited:
    """A backend whose every request first waits its turn at a RateLimiter."""

    def __init__(self, backend: Backend, limiter: RateLimiter):
        self._backend, self._limiter = backend, limiter

    def __getattr__(self, name: str) -> Any:  # name, model (which may change on fallback), ...
        return getattr(self._backend, name)

    async def complete(self, *args: Any, **kwargs: Any):
        await self._limiter.wait()
        return await self._backend.complete(*args, **kwargs)
