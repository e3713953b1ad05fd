"""The immutable, versioned image registry: the rules (names, ids, lineage, limits, sessions) above any storage."""

from __future__ import annotations

import contextlib
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from PIL import Image

from .admission import WorkBudget
from .errors import LimitError, ToolInputError
from .limits import Limits
from .memory_storage import MemoryStorage
from .records import ImageRecord
from .storage import Bounds, Refused, Storage

__all__ = ["INPUT_NAME", "OUTPUT_NAME", "ImageRecord", "Registry"]

INPUT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
OUTPUT_NAME = re.compile(r"^img_\d{3,}$")

LOCAL_CLIENT = "local"  # the one client of a stdio or in-process server


class Registry:
    """Server-wide state keyed by session id; every change is checked before the storage keeps it."""

    def __init__(self, limits: Limits | None = None, storage: Storage | None = None):
        self.limits = limits or Limits()
        self.storage = storage or MemoryStorage(self.limits.memory_budget)
        self.work = WorkBudget(self.limits.memory_budget, self._squeeze)
        self._owned: dict[str, OrderedDict[str, None]] = {}  # client -> its sessions, oldest first
        self._quota_lock = threading.Lock()

    # sessions -------------------------------------------------------------
    def create_session(self, client: str = LOCAL_CLIENT) -> str:
        """A new session for `client`, evicting its own oldest beyond its quota, then the largest holder's.

        The quota is for sharing a server between clients: stdio and in-process servers have one client
        ("local"), which may use every session (an agent running 64 samples at once must not evict its own)."""
        session_id = "s_" + secrets.token_urlsafe(18)
        with self._quota_lock:
            owned = self._owned.setdefault(client, OrderedDict())
            while client != LOCAL_CLIENT and len(owned) >= self.limits.max_sessions_per_client:
                self._evict(owned)
            live = set(self.storage.session_ids())
            for sessions in self._owned.values():
                for stale in [s for s in sessions if s not in live]:
                    del sessions[stale]
            largest = max(self._owned.values(), key=len)
            if len(live) >= self.limits.max_sessions and largest:
                self._evict(largest)
            self.storage.create_session(session_id, self.limits.max_sessions, self.limits.idle_timeout)
            owned[session_id] = None
        return session_id

    def _evict(self, owned: OrderedDict[str, None]) -> None:
        """Close a client's least recently used session (one that already expired counts as closed)."""
        oldest, _ = owned.popitem(last=False)
        with contextlib.suppress(Refused):
            self.storage.drop_session(oldest)

    def _squeeze(self, reserved: int) -> None:
        """Work in flight shares the memory budget: the storage keeps fewer pixels in RAM meanwhile."""
        self.storage.set_ram_budget(max(0, self.limits.memory_budget - reserved))

    def close_session(self, session_id: str) -> int:
        """Forget a session and its pixels; returns how many images it held."""
        with self._rules(session_id):
            return self.storage.drop_session(session_id)

    def session_ids(self) -> list[str]:
        return self.storage.session_ids()

    def _touch(self, session_id: str) -> None:
        with self._rules(session_id):
            self.storage.touch(session_id, self.limits.idle_timeout)
        with self._quota_lock:
            for owned in self._owned.values():
                if session_id in owned:
                    owned.move_to_end(session_id)  # so quotas evict a client's least recently used session

    def _rules(self, session_id: str, image_id: str = ""):
        return _refusals(self.limits, session_id, image_id)

    # images ---------------------------------------------------------------
    def records(self, session_id: str) -> list[ImageRecord]:
        self._touch(session_id)
        with self._rules(session_id):
            return self.storage.records(session_id)

    def record(self, session_id: str, image_id: str, argument: str = "image") -> ImageRecord:
        self._touch(session_id)
        with self._rules(session_id):
            record = self.storage.record(session_id, image_id)
            if record is None:
                known = ", ".join(r.id for r in self.storage.records(session_id)) or "none"
                raise ToolInputError(argument, f"unknown image {image_id!r}; this session has: {known}")
            return record

    def load(self, session_id: str, image_id: str, argument: str = "image") -> Image.Image:
        """A fresh copy of the pixels: callers can draw on it without touching the stored image."""
        self.record(session_id, image_id, argument)
        with self._rules(session_id):  # the session may close in between; the image itself cannot go
            return self.storage.pixels(session_id, image_id)

    def add_input(self, session_id: str, name: str, im: Image.Image, source: str) -> ImageRecord:
        if not INPUT_NAME.match(name) or OUTPUT_NAME.match(name):
            raise ToolInputError("name", f"{name!r} is not allowed; use 1-64 letters, digits, '_', '-' or '.', "
                                 "starting with a letter, and not img_NNN (reserved for tool outputs)")
        return self._store(session_id, name, im, "input", {"source": source}, ())

    def add_output(self, session_id: str, im: Image.Image, operation: str, arguments: dict[str, Any],
                   parents: tuple[str, ...]) -> ImageRecord:
        """Store a tool's result as the next img_NNN; the session is untouched if a limit says no."""
        return self._store(session_id, "", im, operation, arguments, parents)

    def _store(self, session_id: str, image_id: str, im: Image.Image, operation: str,
               arguments: dict[str, Any], parents: tuple[str, ...]) -> ImageRecord:
        limits = self.limits
        pixels = im.width * im.height
        if pixels > limits.max_pixels:
            raise LimitError("output", f"{im.width}x{im.height} = {pixels} pixels is over the "
                             f"{limits.max_pixels} pixel limit (max_pixels)")
        self._touch(session_id)
        record = ImageRecord(image_id, im.width, im.height, im.mode, operation, arguments, parents, time.time())
        bounds = Bounds(limits.max_images, limits.max_session_bytes, limits.idle_timeout)
        with self._rules(session_id, image_id):
            return self.storage.append(session_id, record, im, bounds)

    @property
    def bytes_in_memory(self) -> int:
        return self.storage.bytes_in_memory

    def close(self) -> None:
        self.storage.close()

    def remove_spill(self) -> None:
        """Delete local temporary files without locking: only for a process that is about to exit."""
        self.storage.remove_spill()


@contextmanager
def _refusals(limits: Limits, session_id: str, image_id: str) -> Iterator[None]:
    """Turn a storage's refusal into the error a caller reads: the wording of every rule lives here."""
    try:
        yield
    except Refused as exc:
        if exc.reason == "session":
            raise ToolInputError("session", f"unknown, closed or expired session {session_id!r} (sessions "
                                 f"idle for {limits.idle_timeout:g} s are dropped); call open_session first") from None
        if exc.reason == "exists":
            raise ToolInputError("name", f"{image_id!r} already exists in this session; images are never "
                                 "replaced") from None
        if exc.reason == "max_images":
            raise LimitError("session", f"already holds {limits.max_images} images (max_images); "
                             "close it and open a new one") from None
        raise LimitError("session", f"would hold {exc.value} pixel bytes, over the "
                         f"{limits.max_session_bytes} byte limit (max_session_bytes)") from None
