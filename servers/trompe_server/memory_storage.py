"""The `memory` registry storage: one process's sessions in RAM, the least recently used pixels spilled to disk."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from .admission import mode_bytes
from .rawpixels import packed_blocks
from .records import ImageRecord
from .storage import EVICTIONS_KEPT, OUTPUT_FORMAT, Bounds, Quota, Refused


@dataclass
class Session:
    """One sample's workspace as this process holds it."""

    id: str
    owner: str  # the client whose quota it counts against
    last_used: float  # on the storage's clock
    records: dict[str, ImageRecord] = field(default_factory=dict)
    counter: int = 0
    nbytes: int = 0
    requests: dict[str, str] = field(default_factory=dict)  # request id -> the image id that request stored
    opened_by: str | None = None  # the request id of the open that made it


SPILL_PREFIX = "trompe-spill-"  # then the owner's pid, so a later server can tell an orphan from a live one


def remove_orphaned_spill() -> None:
    """Delete spill folders left by servers that were killed (SIGKILL runs no cleanup)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{SPILL_PREFIX}*-*"):
        pid = folder.name.removeprefix(SPILL_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def _remove_folders(folders: list[Path]) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    folders.clear()


def _bands(width: int, height: int, mode: str) -> list[tuple[int, int]]:
    """(top, rows) of horizontal bands of about 8 MB each."""
    rows = max(1, (8 << 20) // max(1, width * len(mode)))
    return [(top, min(rows, height - top)) for top in range(0, height, rows)]


class PixelStore:
    """Decoded pixels in RAM up to a budget; the least recently used images spill to disk.

    RAM holds the Image objects themselves, shared read-only with the calls that read them: storing one costs
    no copy, and a crop of a 48 MP image reads only its box (a 48 MP tobytes() was 165 ms, frombytes() 133:
    bench/registry_copies.py).
    """

    def __init__(self, budget: int):
        self.budget = budget
        self.in_memory = 0
        self._ram: OrderedDict[tuple[str, str], Image.Image] = OrderedDict()
        self._disk: dict[tuple[str, str], tuple[str, tuple[int, int], Path]] = {}
        self._made: list[Path] = []  # the spill folder, made at the first spill: a process killed before leaves none
        self.cleanup = weakref.finalize(self, _remove_folders, self._made)  # also at exit
        remove_orphaned_spill()

    @property
    def dir(self) -> Path:
        if not self._made:
            self._made.append(Path(tempfile.mkdtemp(prefix=f"{SPILL_PREFIX}{os.getpid()}-")))
        return self._made[0]

    def put(self, key: tuple[str, str], im: Image.Image) -> None:
        """Keep `im` itself (the caller never changes it again), or write it to disk if it alone is over budget."""
        if footprint(im) > self.budget:
            self._disk[key] = (im.mode, im.size, self._write(key, im))
            return
        self._ram[key] = im
        self.in_memory += footprint(im)
        self.spill()

    def get(self, key: tuple[str, str]) -> Image.Image:
        """The stored image, shared: read it, never draw on it."""
        if key in self._ram:
            self._ram.move_to_end(key)
            return shared(self._ram[key])
        mode, (width, height), path = self._disk[key]
        im = Image.new(mode, (width, height))
        with path.open("rb") as file:  # in bands, so reading back never holds the raw bytes and the image at once
            for top, rows in _bands(width, height, mode):
                im.paste(Image.frombytes(mode, (width, rows), file.read(width * rows * len(mode))), (0, top))
        return im

    def _write(self, key: tuple[str, str], im: Image.Image) -> Path:
        """The raw pixels (as tobytes() lays them out), packed by Pillow's raw encoder in C and written block by
        block: never a whole raw copy in RAM (bench/registry_copies.py)."""
        path = self.dir / f"{key[0]}-{key[1]}.raw"
        with path.open("wb") as file:
            for block in packed_blocks(im):
                file.write(block)
        return path

    def drop_session(self, session_id: str) -> None:
        for key in [k for k in self._ram if k[0] == session_id]:
            self.in_memory -= footprint(self._ram.pop(key))
        for key in [k for k in self._disk if k[0] == session_id]:
            self._disk.pop(key)[2].unlink(missing_ok=True)

    def spill(self) -> None:
        while self.in_memory > self.budget and self._ram:
            key, im = self._ram.popitem(last=False)
            self._disk[key] = (im.mode, im.size, self._write(key, im))
            self.in_memory -= footprint(im)

    def close(self) -> None:
        self._ram.clear()
        self._disk.clear()
        self.in_memory = 0
        self.cleanup()


def shared(im: Image.Image) -> Image.Image:
    """A new Image object over the same pixels, marked read-only: Pillow copies it before its first change.

    The mark is Pillow's own copy-on-write for mapped buffers (ImageDraw, paste and putpixel copy a read-only
    image first), so a tool that draws on what it should only read changes its own object, never the stored
    image; ToolContext.image() reads the mark to copy only shared images (not those read back from disk)."""
    view = im._new(im.im)
    view.readonly = 1
    return view


def footprint(im: Image.Image) -> int:
    """Bytes an image takes in Pillow's memory (RGB, like RGBA, at 4 bytes a pixel)."""
    return im.width * im.height * mode_bytes(im.mode)


class MemoryStorage:
    """Sessions of one server process, guarded by one lock (the default `--registry memory`)."""

    def __init__(self, memory_budget: int, clock: Callable[[], float] = time.monotonic):
        """`clock` is the monotonic clock idle expiry is measured on; tests pass a clock they move."""
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._opened: dict[str, str] = {}  # request id -> the session that open made
        self._evicted: OrderedDict[str, str] = OrderedDict()  # session id -> the quota that evicted it (newest last)
        self._pixels = PixelStore(memory_budget)
        self._lock = threading.RLock()

    def create_session(self, session_id: str, client: str, quota: Quota, request: str | None = None) -> str:
        with self._lock:  # self._sessions is in order of last use, so the first of a kind is the least recent
            self._expire_idle(quota.idle_timeout)
            if request and (earlier := self._opened.get(request)) is not None:
                return earlier
            if quota.per_client is not None:
                mine = [s.id for s in self._sessions.values() if s.owner == client]
                for oldest in mine[:max(0, len(mine) - quota.per_client + 1)]:
                    self._evict(oldest, "max_sessions_per_client")
            while len(self._sessions) >= quota.max_sessions:
                held = Counter(s.owner for s in self._sessions.values())
                most = max(held.values())
                self._evict(next(s.id for s in self._sessions.values() if held[s.owner] == most), "max_sessions")
            self._sessions[session_id] = Session(session_id, client, self.clock(), opened_by=request)
            if request:
                self._opened[request] = session_id
            return session_id

    def touch(self, session_id: str, idle_timeout: float) -> None:
        with self._lock:
            self._expire_idle(idle_timeout)
            self._session(session_id).last_used = self.clock()
            self._sessions.move_to_end(session_id)

    def drop_session(self, session_id: str) -> int:
        with self._lock:
            count = len(self._session(session_id).records)
            self._drop(session_id)
            return count

    def session_ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def records(self, session_id: str) -> list[ImageRecord]:
        with self._lock:
            return list(self._session(session_id).records.values())

    def record(self, session_id: str, image_id: str) -> ImageRecord | None:
        with self._lock:
            return self._session(session_id).records.get(image_id)

    def pixels(self, session_id: str, image_id: str) -> Image.Image:
        """The stored image itself while it is in RAM (shared: never drawn on), else read back from disk."""
        with self._lock:
            self._session(session_id)  # closed since its record was read: refused, not a missing key
            try:
                return self._pixels.get((session_id, image_id))
            except FileNotFoundError:  # a temp cleaner deleted the spill file
                raise Refused("lost") from None

    def append(self, session_id: str, record: ImageRecord, im: Image.Image, bounds: Bounds,
               request: str | None = None) -> ImageRecord:
        with self._lock:
            session = self._session(session_id)
            if request in session.requests:  # stored before, its reply lost: the stored version, not a copy
                return session.records[session.requests[request]]
            if record.id in session.records:
                raise Refused("exists")
            if len(session.records) >= bounds.max_images:
                raise Refused("max_images", len(session.records))
            if session.nbytes + record.nbytes > bounds.max_session_bytes:
                raise Refused("max_session_bytes", session.nbytes + record.nbytes)
            if not record.id:
                session.counter += 1
                record = dataclasses.replace(record, id=OUTPUT_FORMAT % session.counter)
            self._pixels.put((session_id, record.id), im)
            session.records[record.id] = record
            session.nbytes += record.nbytes
            if request:
                session.requests[request] = record.id
            return record

    def set_ram_budget(self, budget: int) -> None:
        """Keep at most `budget` pixel bytes in RAM (lowered while tool calls have work in flight)."""
        with self._lock:
            self._pixels.budget = budget
            self._pixels.spill()

    @property
    def bytes_in_memory(self) -> int:
        return self._pixels.in_memory

    @property
    def spill_dir(self) -> Path:
        return self._pixels.dir

    def close(self) -> None:
        with self._lock:
            self._sessions.clear()
            self._opened.clear()
            self._pixels.close()

    def remove_spill(self) -> None:
        self._pixels.cleanup()

    def _session(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise Refused("session", evicted_by=self._evicted.get(session_id, ""))
        return session

    def _evict(self, session_id: str, quota: str) -> None:
        """Drop a live session for a quota, remembering which (the last EVICTIONS_KEPT of them)."""
        self._drop(session_id)
        self._evicted[session_id] = quota
        while len(self._evicted) > EVICTIONS_KEPT:
            self._evicted.popitem(last=False)

    def _expire_idle(self, idle_timeout: float) -> None:
        deadline = self.clock() - idle_timeout
        for session_id in [s.id for s in self._sessions.values() if s.last_used < deadline]:
            self._drop(session_id)

    def _drop(self, session_id: str) -> None:
        session = self._sessions.pop(session_id)
        if session.opened_by:
            self._opened.pop(session.opened_by, None)
        self._pixels.drop_session(session_id)
