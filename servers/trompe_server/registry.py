"""The immutable, versioned image registry: sessions of images that are never modified."""

from __future__ import annotations

import re
import secrets
import shutil
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from .errors import LimitError, ToolInputError
from .limits import Limits

INPUT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
OUTPUT_NAME = re.compile(r"^img_\d{3,}$")


@dataclass(frozen=True)
class ImageRecord:
    """One image's identity and lineage: how it was made and from what."""

    id: str
    width: int
    height: int
    mode: str
    operation: str
    arguments: dict[str, Any]
    parents: tuple[str, ...]
    created: float

    @property
    def nbytes(self) -> int:
        return self.width * self.height * len(self.mode)

    def describe(self) -> dict[str, Any]:
        return asdict(self) | {"parents": list(self.parents)}


@dataclass
class Session:
    """One sample's workspace; its id is a bearer capability, so it is random and unguessable."""

    id: str
    records: dict[str, ImageRecord] = field(default_factory=dict)
    counter: int = 0
    nbytes: int = 0
    last_used: float = field(default_factory=time.monotonic)


class PixelStore:
    """Decoded pixels in RAM up to a budget; the least recently used images spill to disk."""

    def __init__(self, budget: int):
        self.budget = budget
        self.in_memory = 0
        self._ram: OrderedDict[tuple[str, str], tuple[str, tuple[int, int], bytes]] = OrderedDict()
        self._disk: dict[tuple[str, str], tuple[str, tuple[int, int], Path]] = {}
        self._dir = Path(tempfile.mkdtemp(prefix="trompe-spill-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)  # also at exit

    def put(self, key: tuple[str, str], im: Image.Image) -> None:
        raw = im.tobytes()
        self._ram[key] = (im.mode, im.size, raw)
        self.in_memory += len(raw)
        self._spill()

    def get(self, key: tuple[str, str]) -> Image.Image:
        if key in self._ram:
            self._ram.move_to_end(key)
            mode, size, raw = self._ram[key]
        else:
            mode, size, path = self._disk[key]
            raw = path.read_bytes()
        return Image.frombytes(mode, size, raw)

    def drop_session(self, session_id: str) -> None:
        for key in [k for k in self._ram if k[0] == session_id]:
            self.in_memory -= len(self._ram.pop(key)[2])
        for key in [k for k in self._disk if k[0] == session_id]:
            self._disk.pop(key)[2].unlink(missing_ok=True)

    def _spill(self) -> None:
        while self.in_memory > self.budget and len(self._ram) > 1:
            key, (mode, size, raw) = self._ram.popitem(last=False)
            path = self._dir / f"{key[0]}-{key[1]}.raw"
            path.write_bytes(raw)
            self._disk[key] = (mode, size, path)
            self.in_memory -= len(raw)

    def close(self) -> None:
        self._ram.clear()
        self._disk.clear()
        self.in_memory = 0
        self._cleanup()


class Registry:
    """Server-wide state keyed by session id; every change is checked before anything is stored."""

    def __init__(self, limits: Limits | None = None):
        self.limits = limits or Limits()
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._pixels = PixelStore(self.limits.memory_budget)
        self._lock = threading.RLock()

    # sessions -------------------------------------------------------------
    def create_session(self) -> str:
        with self._lock:
            self._expire_idle()
            while len(self._sessions) >= self.limits.max_sessions:
                oldest = next(iter(self._sessions))
                self._drop(oldest)
            session_id = "s_" + secrets.token_urlsafe(18)
            self._sessions[session_id] = Session(session_id)
            return session_id

    def close_session(self, session_id: str) -> int:
        """Forget a session and its pixels; returns how many images it held."""
        with self._lock:
            count = len(self._session(session_id).records)
            self._drop(session_id)
            return count

    def session_ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def _session(self, session_id: str) -> Session:
        self._expire_idle()
        session = self._sessions.get(session_id)
        if session is None:
            raise ToolInputError("session", f"unknown, closed or expired session {session_id!r} (sessions idle "
                                 f"for {self.limits.idle_timeout:g} s are dropped); call open_session first")
        session.last_used = time.monotonic()
        self._sessions.move_to_end(session_id)
        return session

    def _expire_idle(self) -> None:
        deadline = time.monotonic() - self.limits.idle_timeout
        for session_id in [s.id for s in self._sessions.values() if s.last_used < deadline]:
            self._drop(session_id)

    def _drop(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._pixels.drop_session(session_id)

    # images ---------------------------------------------------------------
    def records(self, session_id: str) -> list[ImageRecord]:
        with self._lock:
            return list(self._session(session_id).records.values())

    def record(self, session_id: str, image_id: str, argument: str = "image") -> ImageRecord:
        with self._lock:
            session = self._session(session_id)
            if image_id not in session.records:
                known = ", ".join(session.records) or "none"
                raise ToolInputError(argument, f"unknown image {image_id!r}; this session has: {known}")
            return session.records[image_id]

    def load(self, session_id: str, image_id: str, argument: str = "image") -> Image.Image:
        """A fresh copy of the pixels: callers can draw on it without touching the stored image."""
        with self._lock:
            self.record(session_id, image_id, argument)
            return self._pixels.get((session_id, image_id))

    def add_input(self, session_id: str, name: str, im: Image.Image, source: str) -> ImageRecord:
        if not INPUT_NAME.match(name) or OUTPUT_NAME.match(name):
            raise ToolInputError("name", f"{name!r} is not allowed; use 1-64 letters, digits, '_', '-' or '.', "
                                 "starting with a letter, and not img_NNN (reserved for tool outputs)")
        with self._lock:
            session = self._session(session_id)
            if name in session.records:
                raise ToolInputError("name", f"{name!r} already exists in this session; images are never replaced")
            return self._store(session, name, im, "input", {"source": source}, ())

    def add_output(self, session_id: str, im: Image.Image, operation: str, arguments: dict[str, Any],
                   parents: tuple[str, ...]) -> ImageRecord:
        """Store a tool's result as the next img_NNN; the session is untouched if a limit says no."""
        with self._lock:
            session = self._session(session_id)
            return self._store(session, f"img_{session.counter + 1:03d}", im, operation, arguments, parents)

    def _store(self, session: Session, image_id: str, im: Image.Image, operation: str,
               arguments: dict[str, Any], parents: tuple[str, ...]) -> ImageRecord:
        limits = self.limits
        pixels = im.width * im.height
        if pixels > limits.max_pixels:
            raise LimitError("output", f"{im.width}x{im.height} = {pixels} pixels is over the "
                             f"{limits.max_pixels} pixel limit (max_pixels)")
        if len(session.records) >= limits.max_images:
            raise LimitError("session", f"already holds {limits.max_images} images (max_images); "
                             "close it and open a new one")
        record = ImageRecord(image_id, im.width, im.height, im.mode, operation, arguments, parents, time.time())
        if session.nbytes + record.nbytes > limits.max_session_bytes:
            raise LimitError("session", f"would hold {session.nbytes + record.nbytes} pixel bytes, over the "
                             f"{limits.max_session_bytes} byte limit (max_session_bytes)")
        self._pixels.put((session.id, image_id), im)
        session.records[image_id] = record
        session.nbytes += record.nbytes
        if OUTPUT_NAME.match(image_id):
            session.counter += 1
        return record

    @property
    def bytes_in_memory(self) -> int:
        return self._pixels.in_memory

    def close(self) -> None:
        with self._lock:
            self._sessions.clear()
            self._pixels.close()

    def remove_spill(self) -> None:
        """Delete the spill folder without taking the lock: only for a process that is about to exit."""
        self._pixels._cleanup()
