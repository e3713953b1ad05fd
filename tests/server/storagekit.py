"""The registry's storages as a storage test meets them: one kind at a time, shared by imagined replicas.

Every storage contract test takes the `storage` fixture (tests/server/conftest.py), which runs it on each of
STORAGES; a test about what the shared kinds keep in Redis (keys, their TTLs) takes `shared_storage`, on SHARED,
and a property test of the sessions' quotas `session_storage`, on SESSION_RECORDS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from trompe_server.limits import Limits
from trompe_server.memory_storage import MemoryStorage
from trompe_server.redis_storage import PREFIX, RedisStorage
from trompe_server.registry import Registry
from trompe_server.s3_storage import S3Storage
from trompe_server.storage import Storage

STORAGES = ("memory", "redis", "s3")  # every storage a user can choose with --registry (s3: redis+s3://)
SHARED = ("redis", "s3")  # the ones replicas share through Redis
# where sessions, their owners and the quotas live: redis+s3 keeps them in Redis by the same code as redis, so a
# property test of the quotas (hundreds of examples) runs on these and spares moto's S3 server
SESSION_RECORDS = ("memory", "redis")


@dataclass
class StorageKind:
    """One storage kind on the test's own Redis database (and bucket); whatever it opens is closed after the test."""

    kind: str
    url: str  # what `--registry` takes for it: 'memory', or the test's redis:// or redis+s3:// URL
    made: list[Callable[[], None]] = field(default_factory=list)

    def open(self, limits: Limits, prefix: str = PREFIX) -> Storage:
        """A storage as one replica opens it (its own connections and pixel cache on the shared kinds)."""
        if self.kind == "memory":
            storage: Storage = MemoryStorage(limits.memory_budget)
        else:
            storage = (RedisStorage if self.kind == "redis" else S3Storage)(self.url, limits.memory_budget, prefix)
        self.made.append(storage.close)
        return storage

    def replicas(self, limits: Limits, prefix: str = PREFIX, n: int = 2) -> list[Registry]:
        """n registries as n replicas see one deployment: in memory that is one registry (one process) n times."""
        if self.kind == "memory":
            return [Registry(limits, self.open(limits, prefix))] * n
        return [Registry(limits, self.open(limits, prefix)) for _ in range(n)]

    def close(self) -> None:
        """Close everything opened so far (the fixture does at the end; a test may between examples)."""
        while self.made:
            self.made.pop()()
