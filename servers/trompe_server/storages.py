"""Which storage `--registry` names: the concrete choice, made where the server is assembled (app.py)."""

from __future__ import annotations

from .limits import Limits
from .memory_storage import MemoryStorage
from .storage import Storage


def parse_registry(raw: str) -> str:
    """Accept 'memory' or a Redis URL (redis://HOST:PORT/DB, rediss://..., unix://PATH?db=N)."""
    text = raw.strip()
    if text == "memory" or text.split("://", 1)[0] in ("redis", "rediss", "unix") and "://" in text:
        return text
    raise ValueError(f"{raw!r} is not a registry; accepted: memory, redis://HOST:PORT/DB, rediss://HOST:PORT/DB "
                     "or unix:///path/redis.sock?db=N")


def open_storage(url: str, limits: Limits) -> Storage:
    """The storage named by `--registry`; a Redis that cannot be reached is a start-up error naming the URL."""
    if parse_registry(url) == "memory":
        return MemoryStorage(limits.memory_budget)
    from .redis_storage import RedisStorage  # the redis client is an extra (trompe[redis]): loaded when asked for

    return RedisStorage(url, limits.memory_budget)
