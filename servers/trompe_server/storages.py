"""Which storage `--registry` names: the concrete choice by URL scheme, made where the server is assembled (app.py).

Every scheme comes from a plugin's `register_storages` hook (trompe_kernel/hookspecs.py); the built-in ones below
(the built-in plugin `storages`, trompe_kernel/builtins.py) register through it as a third-party plugin's do, and a
scheme two plugins register is refused naming both.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from trompe_kernel.errors import PluginConflict
from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import Plugins
from trompe_kernel.registry import PluginRegistry

from .limits import Limits
from .storage import Storage, redacted

SCHEME = re.compile(r"[a-z][a-z0-9+.-]{0,31}")  # RFC 3986's scheme characters, lower case
Factory = Callable[[str, Limits], Storage]


def _memory(url: str, limits: Limits) -> Storage:
    from .memory_storage import MemoryStorage

    return MemoryStorage(limits.memory_budget)


def _redis(url: str, limits: Limits) -> Storage:
    from .redis_storage import RedisStorage  # the redis client is an extra (trompe[redis]): loaded when asked for

    return RedisStorage(url, limits.memory_budget)


def _redis_s3(url: str, limits: Limits) -> Storage:
    from .s3_storage import S3Storage  # boto3 is an extra (trompe[s3])

    return S3Storage(url, limits.memory_budget)


@hookimpl
def register_storages(register):
    """The built-in storages: one process's memory, Redis shared by replicas, Redis with pixels in S3."""
    register("memory", _memory)
    for scheme in ("redis", "rediss", "unix"):
        register(scheme, _redis)
    for scheme in ("redis+s3", "rediss+s3"):
        register(scheme, _redis_s3)


def parse_registry(raw: str) -> str:
    """Accept 'memory' or a URL SCHEME://...; which schemes exist is known once the plugins are loaded."""
    text = raw.strip()
    scheme, sep, rest = text.partition("://")
    if text in ("memory", "memory://"):
        return "memory"  # one spelling, so `registry != "memory"` tells a shared storage
    if sep and SCHEME.fullmatch(scheme.lower()) and scheme.lower() != "memory" and rest:
        return text
    raise ValueError(f"{raw!r} is not a registry; accepted: memory, redis://HOST:PORT/DB, rediss://HOST:PORT/DB, "
                     "unix:///path/redis.sock?db=N, redis+s3://HOST:PORT/DB?bucket=NAME, or another "
                     "SCHEME://... a storage plugin registers")


def storage_factories(plugins: Plugins) -> PluginRegistry:
    """scheme -> factory for every storage the plugins register, the built-ins included (`.owners`: whose)."""
    found = PluginRegistry("storage scheme", plugins.settings.allow)
    for impl in plugins.implementations("register_storages"):
        impl.function(register=_registrar(found, impl.plugin_name))
    return found


def _registrar(found: PluginRegistry, plugin: str) -> Callable[[str, Factory], None]:
    def register(scheme: str, factory: Factory) -> None:
        if not isinstance(scheme, str) or not SCHEME.fullmatch(scheme):
            raise PluginConflict(f"plugin {plugin!r} registers a storage scheme {scheme!r}; accepted: a "
                                 "lower-case letter, then up to 31 of a-z, 0-9, '+', '-', '.'")
        found.add(scheme, factory, plugin)

    return register


def open_storage(url: str, limits: Limits, plugins: Plugins) -> Storage:
    """The storage `--registry` names, by its scheme; an unknown scheme is a start-up error listing the known ones."""
    url = parse_registry(url)
    scheme = "memory" if url == "memory" else url.partition("://")[0].lower()
    factories = storage_factories(plugins)
    if scheme not in factories:
        raise ValueError(f"--registry {redacted(url)}: unknown storage scheme {scheme!r}; known: "
                         f"{', '.join(factories)} (a storage plugin adds more)")
    return factories[scheme](url, limits)
