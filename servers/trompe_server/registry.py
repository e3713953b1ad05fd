"""The immutable, versioned image registry: the rules (names, ids, lineage, limits, sessions) above any storage."""

from __future__ import annotations

import contextlib
import re
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from PIL import Image

from .admission import WorkBudget, heap_free
from .errors import LimitError, ServerFault, SessionGone, ToolInputError
from .limits import Limits
from .memory_storage import MemoryStorage
from .records import ImageRecord
from .storage import Bounds, Quota, Refused, Storage

__all__ = ["INPUT_NAME", "OUTPUT_NAME", "ImageRecord", "Registry"]

INPUT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
OUTPUT_NAME = re.compile(r"^img_\d{3,}$")

LOCAL_CLIENT = "local"  # the one client of a stdio or in-process server


class Registry:
    """Server-wide state keyed by session id; every change is checked before the storage keeps it."""

    def __init__(self, limits: Limits | None = None, storage: Storage | None = None):
        self.limits = limits or Limits()
        self.storage = storage or MemoryStorage(self.limits.memory_budget)
        self.pinned = 0  # bytes of these pixels held outside the storage (pixel_segments): they count too
        self.work = WorkBudget(self.limits.memory_budget, self._squeeze)

    # sessions -------------------------------------------------------------
    def create_session(self, client: str = LOCAL_CLIENT, request: str | None = None) -> str:
        """A new session for `client`, evicting its own oldest beyond its quota, then the largest holder's.

        The quota is for sharing a server between clients: stdio and in-process servers have one client
        ("local"), which may use every session (an agent running 64 samples at once must not evict its own).
        The storage counts and evicts in one step, so replicas sharing it hold each client to one quota.
        A retried `request` gets the session its first try opened."""
        session_id = "s_" + secrets.token_urlsafe(18)
        per_client = None if client == LOCAL_CLIENT else self.limits.max_sessions_per_client
        return self.storage.create_session(session_id, client,
                                           Quota(self.limits.max_sessions, per_client, self.limits.idle_timeout),
                                           request)

    def open_session(self, client: str, name: str, im: Image.Image, source: str,
                     request: str | None = None) -> tuple[str, ImageRecord]:
        """A new session holding its first image, or no session at all when the image is refused.

        `request` is the caller's id for this call: a retry of it (the reply was lost) returns the same
        session and image instead of opening another."""
        _check_input_name(name)
        session_id = self.create_session(client, request)
        try:
            return session_id, self.add_input(session_id, name, im, source, request)
        except SessionGone:  # other opens evicted it first: say why, not "call open_session first"
            raise SessionGone("the new session was evicted before its first image was stored: more "
                              "sessions were opened at once than the quotas allow (max_sessions_per_client "
                              f"{self.limits.max_sessions_per_client}, max_sessions {self.limits.max_sessions}); "
                              "raise them on the server (--max-sessions-per-client, --max-sessions) or open "
                              "fewer at once") from None
        except (ToolInputError, ServerFault):
            with contextlib.suppress(SessionGone):  # evicted meanwhile: the image's own error is the one to see
                self.close_session(session_id)
            raise

    def _squeeze(self, reserved: int) -> None:
        """Work in flight, the heap's free holes and pixels pinned outside the storage (shared segments) share
        the memory budget: the storage keeps fewer pixels in RAM meanwhile."""
        self.storage.set_ram_budget(max(0, self.limits.memory_budget - reserved - heap_free() - self.pinned))

    def pin(self, nbytes: int) -> None:
        """Count `nbytes` more (or fewer) held outside the storage against the memory budget."""
        self.pinned += nbytes
        self._squeeze(self.work.reserved)

    def close_session(self, session_id: str) -> int:
        """Forget a session and its pixels; returns how many images it held."""
        with self._rules(session_id):
            return self.storage.drop_session(session_id)

    def session_ids(self) -> list[str]:
        return self.storage.session_ids()

    def touch(self, session_id: str) -> None:
        """Mark the session used now, or refuse an unknown, closed or expired one with the documented error."""
        with self._rules(session_id):
            self.storage.touch(session_id, self.limits.idle_timeout)  # quotas evict the least recently used

    def _rules(self, session_id: str, image_id: str = ""):
        return _refusals(self.limits, session_id, image_id)

    # images ---------------------------------------------------------------
    def records(self, session_id: str) -> list[ImageRecord]:
        self.touch(session_id)
        with self._rules(session_id):
            return self.storage.records(session_id)

    def record(self, session_id: str, image_id: str, argument: str = "image") -> ImageRecord:
        self.touch(session_id)
        with self._rules(session_id):
            record = self.storage.record(session_id, image_id)
            if record is None:
                known = ", ".join(r.id for r in self.storage.records(session_id)) or "none"
                raise ToolInputError(argument, f"unknown image {image_id!r}; this session has: {known}")
            return record

    def load(self, session_id: str, image_id: str, argument: str = "image") -> Image.Image:
        """The stored pixels, maybe shared with other calls: read them, and copy() before drawing on them.

        Shared because copies were most of a large image's call: a 48 MP crop spent 129 of 168 ms rebuilding
        the stored image, and storing a 48 MP result 194 ms serialising it (bench/README.md, "Whole-image copies")."""
        return self.pixels(session_id, self.record(session_id, image_id, argument))

    def pixels(self, session_id: str, record: ImageRecord) -> Image.Image:
        """As load(), for a record the caller has just looked up: the session is not touched nor searched twice."""
        with self._rules(session_id, record.id):  # the session may close in between
            return self.storage.pixels(session_id, record.id)

    def add_input(self, session_id: str, name: str, im: Image.Image, source: str,
                  request: str | None = None) -> ImageRecord:
        _check_input_name(name)
        return self._store(session_id, name, im, "input", {"source": source}, (), request)

    def add_output(self, session_id: str, im: Image.Image, operation: str, arguments: dict[str, Any],
                   parents: tuple[str, ...], request: str | None = None) -> ImageRecord:
        """Store a tool's result as the next img_NNN; the session is untouched if a limit says no.

        The registry may keep `im` itself, unserialised: the caller never changes it afterwards.

        A retried `request` (its reply was lost) returns the image its first try stored, not a second one."""
        return self._store(session_id, "", im, operation, arguments, parents, request)

    def _store(self, session_id: str, image_id: str, im: Image.Image, operation: str,
               arguments: dict[str, Any], parents: tuple[str, ...], request: str | None) -> ImageRecord:
        limits = self.limits
        pixels = im.width * im.height
        if pixels > limits.max_pixels:  # an input is named as open_session and add_image call it
            raise LimitError("source" if operation == "input" else "output", f"{im.width}x{im.height} = "
                             f"{pixels} pixels is over the {limits.max_pixels} pixel limit (max_pixels)")
        self.touch(session_id)
        record = ImageRecord(image_id, im.width, im.height, im.mode, operation, arguments, parents, time.time())
        bounds = Bounds(limits.max_images, limits.max_session_bytes, limits.idle_timeout)
        with self._rules(session_id, image_id):
            return self.storage.append(session_id, record, im, bounds, request)

    @property
    def bytes_in_memory(self) -> int:
        return self.storage.bytes_in_memory

    def close(self) -> None:
        self.storage.close()

    def remove_spill(self) -> None:
        """Delete local temporary files without locking: only for a process that is about to exit."""
        self.storage.remove_spill()


def _check_input_name(name: str) -> None:
    if not INPUT_NAME.match(name) or OUTPUT_NAME.match(name):
        raise ToolInputError("name", f"{name!r} is not allowed; use 1-64 letters, digits, '_', '-' or '.', "
                             "starting with a letter, and not img_NNN (reserved for tool outputs)")


@contextmanager
def _refusals(limits: Limits, session_id: str, image_id: str) -> Iterator[None]:
    """Turn a storage's refusal into the error a caller reads: the wording of every rule lives here."""
    try:
        yield
    except Refused as exc:
        if exc.reason == "session" and exc.evicted_by:
            held = getattr(limits, exc.evicted_by)
            whose = "its client (bearer token, else connection) may hold" if exc.evicted_by != "max_sessions" \
                else "the server holds"
            flag = exc.evicted_by.replace("_", "-")
            raise SessionGone(f"session {session_id!r} was evicted to make room for newer ones: {whose} "
                              f"at most {held} sessions ({exc.evicted_by}); raise it on the server (--{flag} or "
                              f"TROMPE_{exc.evicted_by.upper()}) or open fewer at once (a lower --concurrency, a "
                              "token per agent); call open_session again") from None
        if exc.reason == "session":
            raise SessionGone(f"unknown, closed or expired session {session_id!r} (sessions "
                              f"idle for {limits.idle_timeout:g} s are dropped); call open_session first") from None
        if exc.reason == "exists":
            raise ToolInputError("name", f"{image_id!r} already exists in this session; images are never "
                                 "replaced") from None
        if exc.reason == "lost":
            raise ToolInputError("image", f"the pixels of {image_id!r} were deleted from disk (a temp cleaner may "
                                 "have removed the server's spill files); open the image again in a new session"
                                 ) from None
        if exc.reason == "max_images":
            raise LimitError("session", f"already holds {exc.value} images (max_images); "
                             "close it and open a new one") from None
        if exc.reason == "max_session_bytes":
            raise LimitError("session", f"would hold {exc.value} pixel bytes, over the "
                             f"{limits.max_session_bytes} byte limit (max_session_bytes)") from None
        raise  # a reason without wording is a storage bug: shown as it is, never as another rule's message
