"""Where the registry keeps sessions, records and pixels: the contract every storage implements.

A storage applies each change atomically with the bounds it is handed; the rules (names, ids, limits,
expiry, error wording) live in registry.Registry, so every backend and every replica obeys the same ones.
The implementations (memory_storage.py, redis_storage.py, s3_storage.py) build on this module; which one a
server uses is chosen by the URL scheme of `--registry` where it is assembled (storages.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from PIL import Image

from .records import ImageRecord

OUTPUT_FORMAT = "img_%03d"  # the next output id from the session's counter; also used inside Redis scripts


def redacted(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")))


@dataclass(frozen=True)
class Bounds:
    """What one append may reach, given by the rules layer and checked by the storage in the same step."""

    max_images: int
    max_session_bytes: int
    idle_timeout: float


@dataclass(frozen=True)
class Quota:
    """How many sessions may live when one is opened: server-wide, and for the opening client."""

    max_sessions: int
    per_client: int | None  # None: this client is not held to a quota (the one client of stdio/in-process)
    idle_timeout: float


EVICTED_BY = ("max_sessions_per_client", "max_sessions")  # the quotas that evict a live session, by name
EVICTIONS_KEPT = 4096  # evicted session ids a storage remembers, so a later call can say which quota evicted it


class Refused(Exception):
    """The storage declined a change; `reason` is 'session', 'exists', 'lost' (pixels deleted behind its back),
    'max_images' (`value`: the images held) or 'max_session_bytes' (`value`: the bytes the session would hold).
    For 'session', `evicted_by` names the quota of EVICTED_BY that evicted it, when one did ('' otherwise)."""

    def __init__(self, reason: str, value: int = 0, evicted_by: str = ""):
        self.reason, self.value, self.evicted_by = reason, value, evicted_by
        super().__init__(reason)


class Storage(Protocol):
    """Sessions of immutable images; every method raises Refused('session') for an unknown or idle session."""

    def create_session(self, session_id: str, client: str, quota: Quota, request: str | None = None) -> str:
        """Add this session as `client`'s, in one step with the evictions that make room for it; returns its id.

        A `request` id a live session was opened with before gets that session back instead (the reply to
        that open was lost, maybe with the connection that told who the client was): no second one is opened.

        Idle sessions are dropped first; then, beyond quota.per_client, the client's own least recently
        used sessions; then, beyond quota.max_sessions, the least recently used session of the clients
        holding the most. Owners live with the sessions, so every replica of a shared storage counts alike."""

    def touch(self, session_id: str, idle_timeout: float) -> None:
        """Mark the session used now."""

    def drop_session(self, session_id: str) -> int:
        """Forget the session and its pixels; returns how many images it held."""

    def session_ids(self) -> list[str]: ...

    def records(self, session_id: str) -> list[ImageRecord]: ...

    def record(self, session_id: str, image_id: str) -> ImageRecord | None: ...

    def pixels(self, session_id: str, image_id: str) -> Image.Image:
        """The stored pixels: an image made for this call, or one shared with other readers and then marked
        read-only (`im.readonly`), which ToolContext.image() copies before a tool draws on it."""

    def append(self, session_id: str, record: ImageRecord, im: Image.Image, bounds: Bounds,
               request: str | None = None) -> ImageRecord:
        """Store the image under record.id, or the next output id when record.id is empty; all or nothing.

        The storage may keep `im` itself: the caller never changes it afterwards.

        When `request` already stored an image in this session, that stored record is returned instead."""

    def set_ram_budget(self, budget: int) -> None:
        """Keep at most `budget` decoded pixel bytes in RAM (lowered while tool calls have work in flight)."""

    @property
    def bytes_in_memory(self) -> int: ...

    def close(self) -> None: ...

    def remove_spill(self) -> None:
        """Delete local temporary files without locking: only for a process that is about to exit."""

