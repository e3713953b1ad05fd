"""Raw pixels for a client on the same host: a sealed memfd per image instead of PNG + base64 + JSON.

Opt-in by construction. A client declares the capability `trompe/shared-pixels` (under `experimental`, or as
an SEP-2133 extension, which is how mcp's own Client can send it) with this host's boot id; only a stdio server
offers it (the client started this process, so it is on this host: `--http` never does), and only when the boot
ids match. Every other client gets today's PNG reply, byte for byte.

Safe by construction:
- a memfd has no name in /dev/shm, so nothing can be left behind there by a crash of either side: the kernel
  frees it when the last descriptor or mapping of it goes (this process's, the client's);
- it is sealed (no write, no resize, no more seals) before anyone else can see it, so neither the client nor this
  server can change an image the registry handed out: immutability is the kernel's, not a promise;
- the client opens it as `/proc/<pid>/fd/<fd>`, which the kernel allows only to this user (ptrace access), and
  checks its inode, size and seals against the reply before mapping it read-only (pixel_segments in agents).

Segments are dropped when their session closes (one that expired or was evicted: at the next publish), and the
oldest first when they would hold more than half the memory budget: they count against it (Registry.pin), so the
storage keeps fewer pixels in RAM while they live. A client maps a segment as soon as its reply arrives, so
dropping one later frees only this server's reference.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .rawpixels import packed_blocks

if TYPE_CHECKING:
    from PIL import Image

CAPABILITY = "trompe/shared-pixels"  # the capability's name, in experimental or extensions, and the result _meta key
VERSION = 1
MODES = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}  # modes a segment holds, packed, and their bytes per pixel
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@cache
def boot_id() -> str:
    """This host's identity for this boot: random, and readable only on the host itself."""
    return BOOT_ID.read_text().strip()


def offer() -> dict[str, Any]:
    """The settings a client declares with the capability."""
    return {"version": VERSION, "boot_id": boot_id()}


def declared(capabilities: Any) -> bool:
    """Whether a client's capabilities ask for shared pixels, this version, from this host's boot."""
    for group in (getattr(capabilities, "experimental", None), getattr(capabilities, "extensions", None)):
        settings = group.get(CAPABILITY) if isinstance(group, Mapping) else None
        if isinstance(settings, Mapping):
            return settings.get("version") == VERSION and settings.get("boot_id") == boot_id()
    return False


@dataclass(frozen=True)
class Segment:
    """One sealed memfd holding an image's packed pixels, and what a client needs to find and check it."""

    fd: int
    device: int
    inode: int
    session: str
    image: str
    width: int
    height: int
    mode: str

    @property
    def nbytes(self) -> int:
        return self.width * self.height * MODES[self.mode]

    def describe(self, max_preview_side: int) -> dict[str, Any]:
        """The result `_meta` entry: where the pixels are, how they are laid out, and how a model's preview is cut."""
        return {"version": VERSION, "pid": os.getpid(), "fd": self.fd, "device": self.device, "inode": self.inode,
                "size": self.nbytes, "width": self.width, "height": self.height, "mode": self.mode,
                "image": self.image, "max_preview_side": max_preview_side}


class Segments:
    """The segments handed out by one server, oldest first; every change under one lock."""

    def __init__(self, budget: int, alive: Callable[[], Iterable[str]], pin: Callable[[int], None]):
        self.budget = budget  # bytes all segments together may hold
        self._alive, self._pin = alive, pin
        self._held: OrderedDict[tuple[str, str], Segment] = OrderedDict()
        self.nbytes = 0  # of every segment held
        self._lock = threading.Lock()

    def publish(self, session: str, image: str, im: Image.Image) -> Segment | None:
        """A sealed segment with `im`'s pixels (the one already made for this image, if any); None when it cannot
        fit in the budget or its mode has no packed layout: the reply is then PNG."""
        if im.mode not in MODES or im.width * im.height * MODES[im.mode] > self.budget:
            return None
        with self._lock:
            if (known := self._held.get((session, image))) is not None:
                self._held.move_to_end((session, image))
                return known
        segment = _sealed(session, image, im)  # outside the lock: the copy is the slow part
        with self._lock:
            if (known := self._held.get((session, image))) is not None:  # another call made it meanwhile
                os.close(segment.fd)
                return known
            if any(key[0] != session for key in self._held):  # sessions closed by expiry or eviction meanwhile
                alive = set(self._alive())
                self._forget([key for key in self._held if key[0] not in alive])
            while self._held and self.nbytes + segment.nbytes > self.budget:
                self._forget([next(iter(self._held))])
            self._held[(session, image)] = segment
            self.nbytes += segment.nbytes
            self._pin(segment.nbytes)
        return segment

    def drop_session(self, session: str) -> None:
        """Close every segment of a session (it was closed): a client's mappings keep only what it still holds."""
        with self._lock:
            self._forget([key for key in self._held if key[0] == session])

    def close(self) -> None:
        with self._lock:
            self._forget(list(self._held))

    def _forget(self, keys: Iterable[tuple[str, str]]) -> None:
        for key in list(keys):
            segment = self._held.pop(key)
            os.close(segment.fd)
            self.nbytes -= segment.nbytes
            self._pin(-segment.nbytes)


def _sealed(session: str, image: str, im: Image.Image) -> Segment:
    """Write the packed pixels into a new memfd and seal it before its descriptor leaves this function."""
    fd = os.memfd_create("trompe-pixels", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, im.width * im.height * MODES[im.mode])
        done = 0
        for block in packed_blocks(im):
            done += os.pwrite(fd, block, done)  # a block is at most 1 MiB: written whole
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        found = os.fstat(fd)
        return Segment(fd, found.st_dev, found.st_ino, session, image, im.width, im.height, im.mode)
    except BaseException:
        os.close(fd)
        raise
