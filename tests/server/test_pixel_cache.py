"""A Redis replica's pixel cache counts exactly what it holds (the server's memory budget and admission read it),
keeps the most recently used within its budget, and holds nothing once cleared; without the Redis client,
`--registry redis` says how to install it."""

from __future__ import annotations

import sys

import pytest

from trompe_server.redis_storage import PixelCache, RedisStorage


def test_the_cache_counts_what_it_holds_and_keeps_the_most_recently_used():
    cache = PixelCache(budget=200)
    assert cache.in_memory == 0 and cache.get("a") is None
    cache.put("a", "RGB", (10, 1), b"a" * 100)
    cache.put("b", "L", (50, 1), b"b" * 50)
    assert cache.in_memory == 150
    cache.put("a", "RGB", (10, 1), b"a" * 100)  # already held: not counted twice
    assert cache.in_memory == 150 and cache.get("b") == ("L", (50, 1), b"b" * 50)
    assert cache.get("a") == ("RGB", (10, 1), b"a" * 100)  # now b is the least recently used
    cache.put("c", "L", (60, 1), b"c" * 60)
    assert cache.in_memory == 160 and cache.get("b") is None and cache.get("a") and cache.get("c")
    cache.put("big", "L", (201, 1), b"x" * 201)  # over the whole budget: never held
    assert cache.get("big") is None and cache.in_memory == 160
    cache.put("whole", "L", (200, 1), b"w" * 200)  # exactly the budget: held, alone
    assert cache.in_memory == 200 and cache.get("whole") and cache.get("a") is None


def test_a_cleared_cache_holds_nothing_even_a_byte():
    cache = PixelCache(budget=100)
    cache.put("a", "L", (1, 1), b"a")
    cache.clear()
    assert cache.in_memory == 0 and cache.get("a") is None
    cache.put("b", "L", (1, 1), b"b")
    assert cache.get("b") is None and cache.in_memory == 0


def test_without_the_redis_client_the_registry_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)  # what `import redis` meets where it is not installed
    with pytest.raises(ValueError) as refused:
        RedisStorage("redis://127.0.0.1:1/0", 0)
    assert str(refused.value) == "--registry redis: the Redis client is not installed; pip install 'trompe[redis]'"
