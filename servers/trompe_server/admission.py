"""Admission control: pixel work in flight is reserved against the memory budget before it starts."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

from .errors import LimitError

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8  # glibc mallopt parameters
MMAP_THRESHOLD = 8 << 20  # above a 1024x1024 image's 4 MiB: such images reuse the heap's pages
WORK_FACTOR = 2  # a call holds about two copies of what it reads: the pixels read and the result being made
PIXEL_BYTES = 4  # Pillow keeps RGB and RGBA, the modes tools work in, at 4 bytes a pixel
# Bytes a pixel takes in Pillow's memory for each mode it can decode (modes:
# https://pillow.readthedocs.io/en/stable/handbook/concepts.html#modes). Every mode not named here (LA, PA, La,
# RGB, RGBA, RGBa, RGBX, CMYK, YCbCr, LAB, HSV, I, F) is stored at 4 bytes a pixel, which is also the most.
MODE_BYTES = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16L": 2, "I;16B": 2, "I;16N": 2}
BAND_PIXELS = 1 << 18  # pixels converted at a time: full-size temporaries of a 50 MP image would take GBs
BAND_WORK = 32 * BAND_PIXELS  # what one band's temporaries take at most (int64 values of a 32-bit grey and more)
WEBP_BUFFERS = 3  # full-size RGBA buffers libwebp's decoder and Pillow's plugin hold while a WebP loads
# Working copies (4 bytes a pixel) a reply's image content holds at its peak: the filtered rows, the PNG, its
# base64 and the JSON text (bench/README.md, "Issue 40's goals": about 11 MiB for a 1024x1024 reply)
REPLY_COPIES = 3


def mode_bytes(mode: str) -> int:
    """Bytes one pixel of `mode` takes once Pillow has decoded it."""
    return MODE_BYTES.get(mode, PIXEL_BYTES)


def wide_grey(mode: str) -> bool:
    """Whether `mode` is a grey of more than 8 bits (16-bit and 32-bit integers, 32-bit floats)."""
    return mode.startswith("I;16") or mode in ("I", "F")


def decode_work(mode: str, size: tuple[int, int], *, webp: bool, transposed: bool) -> int:
    """Peak bytes of decoding an image and making its RGB/RGBA working copy, stage by stage.

    Loading holds the decoded pixels (plus, for WebP, the decoder's own full-size buffers); converting to the
    working mode holds the decoded pixels, the working copy and one band's temporaries, except for a wide
    grey, which is made 8-bit (1 byte a pixel) first and then dropped; an EXIF rotation holds the working copy
    and its rotation.
    """
    pixels = size[0] * size[1]
    decoded = mode_bytes(mode) * pixels
    band = BAND_WORK * min(pixels, BAND_PIXELS) // BAND_PIXELS
    stages = [decoded + (WEBP_BUFFERS * PIXEL_BYTES * pixels if webp else 0), PIXEL_BYTES * pixels]
    if wide_grey(mode):
        stages += [decoded + pixels + band, pixels + PIXEL_BYTES * pixels + band]
    elif mode not in ("RGB", "RGBA"):
        stages.append(decoded + PIXEL_BYTES * pixels + band)
    if mode == "RGBA":  # an opaque RGBA image is worked on as RGB
        stages.append(2 * PIXEL_BYTES * pixels + band)
    if transposed:
        stages.append(2 * PIXEL_BYTES * pixels)
    return max(stages)


class WorkBudget:
    """Bytes that tool calls are about to decode or copy; a call waits while the budget is spoken for.

    A call's first reservation waits for room; later ones of the same call never wait (it already holds
    memory, and two calls each waiting for the other's bytes would deadlock). A reservation larger than the
    whole budget waits until nothing else runs, so large images are worked on one at a time.
    """

    def __init__(self, budget: int, on_change: Callable[[int], None] = lambda reserved: None):
        self.budget = budget
        self.reserved = 0
        self.waiting = 0  # calls waiting for room, for status and tests
        self._on_change = on_change
        self._room = threading.Condition()
        self._held = threading.local()

    def admit_decode(self, nbytes: int, argument: str, size: tuple[int, int], work: int | None = None) -> None:
        """Before decoding: refuse an image whose working copy (`nbytes`) could never fit, or whose decode's peak
        (`work`; default: the working copy and one more) would pass the budget by more than one working copy
        (what any call on the image may) and a band's temporaries, else reserve room for that peak."""
        work = WORK_FACTOR * nbytes if work is None else work
        if nbytes > self.budget:
            raise LimitError(argument, f"image is {size[0]}x{size[1]}; decoding it needs {nbytes} bytes, over the "
                             f"{self.budget}-byte memory budget (memory_budget); send a smaller image or start "
                             "the server with a larger --memory-budget")
        if work > self.budget + nbytes + BAND_WORK:
            raise LimitError(argument, f"image is {size[0]}x{size[1]}; its format decodes through {work} bytes at "
                             f"the peak, over the {self.budget}-byte memory budget (memory_budget) plus one "
                             f"{nbytes}-byte working copy and {BAND_WORK} bytes of conversion; send a smaller "
                             "image, or PNG, or start the server with a larger --memory-budget")
        self.reserve(work)

    def reserve(self, nbytes: int) -> None:
        """Hold `nbytes` (at most the whole budget) until this thread's call ends with release()."""
        nbytes = min(nbytes, self.budget)
        held = getattr(self._held, "nbytes", 0)
        with self._room:
            if held == 0:
                self.waiting += 1
                self._room.wait_for(lambda: self.reserved + nbytes <= self.budget)
                self.waiting -= 1
            self.reserved += nbytes
            self._held.nbytes = held + nbytes
            reserved = self.reserved
        self._on_change(reserved)

    def release(self) -> None:
        """Return everything this thread's call reserved."""
        held = getattr(self._held, "nbytes", 0)
        if not held:
            return
        self._held.nbytes = 0
        with self._room:
            self.reserved -= held
            reserved = self.reserved
            self._room.notify_all()
        self._on_change(reserved)


def return_freed_pixels_to_the_os() -> None:
    """Pin glibc's mmap threshold at 8 MiB and keep one heap, so large freed image buffers leave at once.

    Otherwise glibc raises the threshold after the first large free and later buffers come from per-thread
    heaps that keep their peak: three calls in turn then cost as much RSS as three at once. Below the
    threshold (images up to 1024x1024, bands, encoder buffers) one heap shared by every thread (M_ARENA_MAX
    1), whose top is only given back past twice the threshold, reuses its pages instead of faulting fresh
    ones in on every call (a 1 MiB threshold cost ~10,000 faults and 1.6x the CPU per 1024x1024 draw:
    bench/README.md, "Memory admission"). Freed images below the threshold stay in the heap, wherever they
    were: `trim_heap` gives them back when a session closes.

    mallopt is looked up among the symbols already loaded (the interpreter links the C library):
    ctypes.util.find_library spawned `ldconfig -p` (or a compiler) at every start (bench/README.md, "Server
    cold start").
    """
    import ctypes  # lazily, like the rest of a start: the stdio server's import time is measured

    global _libc
    libc = ctypes.CDLL(None)
    if hasattr(libc, "mallopt"):  # glibc; other C libraries keep their own policy
        libc.mallopt(M_ARENA_MAX, 1)
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        libc.mallopt(M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD)
        _libc = libc


_libc = None  # glibc, once return_freed_pixels_to_the_os has tuned it: only a server's own process is trimmed


def trim_heap() -> None:
    """Give the heap's free pages back to the OS (glibc's malloc_trim), e.g. once a session's pixels are freed:
    images up to ~1450x1450 live in the heap, and the pages of those freed below its top stay otherwise."""
    if _libc is not None and hasattr(_libc, "malloc_trim"):
        _libc.malloc_trim(0)


def heap_free() -> int:
    """Bytes free inside the heap (glibc's mallinfo2 fordblks), which count against the memory budget.

    A reply's encoder buffers (rows, PNG, base64, JSON: 2-3 MiB each at 1 MP) leave holes between kept images
    that later images do not fit: ~1.7 MiB a call, 100 MiB over 100 draws at a 256 MiB budget, resident all
    the while (bench/README.md, "Issue 40's goals"). Counted, they make kept pixels spill instead; the images
    then freed leave holes the next ones fit. 0 where malloc was not tuned (not a server process) or not glibc."""
    if _libc is None or not hasattr(_libc, "mallinfo2"):
        return 0
    if _libc.mallinfo2.restype is not _mallinfo2():
        _libc.mallinfo2.restype = _mallinfo2()
    return _libc.mallinfo2().fordblks


@functools.cache
def _mallinfo2() -> type:
    """glibc's struct mallinfo2 (malloc.h), made once: ctypes is imported lazily, as at start-up."""
    import ctypes

    names = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")
    return type("MallInfo2", (ctypes.Structure,), {"_fields_": [(name, ctypes.c_size_t) for name in names]})
