"""The client's side of `trompe/shared-pixels`: declare it, then map each reply's sealed segment read-only.

A stdio server on this host then answers an image tool with the full-size pixels in a sealed memfd instead of a
PNG preview in base64 JSON (trompe_server.pixel_segments says how it is made safe). The pixels arrive as a
read-only numpy view of a read-only mapping: nothing is decoded or copied. What a model is shown is the same PNG
the server would have sent (its preview rule, its encoder), made here only when something reads it.
"""

from __future__ import annotations

import fcntl
import io
import mmap
import os
import stat
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image
from trompe_server.encode import encode_png, preview
from trompe_server.pixel_segments import CAPABILITY, MODES, SEALS, VERSION, offer

from .messages import ImagePart

if TYPE_CHECKING:
    from mcp.client import ClientExtension

MEMFD_NAME = "/memfd:trompe-pixels"  # what /proc/<pid>/fd/<fd> of a segment links to


def extension() -> ClientExtension:
    """The capability as mcp.Client declares it (an SEP-2133 extension: its `experimental` is always None)."""
    from mcp.client import advertise

    return advertise(CAPABILITY, offer())


class SharedImagePart(ImagePart):
    """A tool's image as mapped pixels; `data` is the PNG a model is shown, encoded the first time it is read."""

    def __init__(self, id: str, pixels: np.ndarray, mode: str, max_preview_side: int):
        self.id, self.mime_type = id, "image/png"
        self.pixels, self.mode, self.max_preview_side = pixels, mode, max_preview_side
        self._png: bytes | None = None

    @property
    def data(self) -> bytes:  # type: ignore[override]
        if self._png is None:
            self._png = encode_png(preview(self.image(), self.max_preview_side))
        return self._png

    def image(self) -> Image.Image:
        """The pixels as a Pillow image of their own (a copy: Pillow keeps RGB four bytes a pixel)."""
        return Image.fromarray(self.pixels, self.mode)

    def __repr__(self) -> str:
        return f"SharedImagePart({self.id!r}, {self.pixels.shape[1]}x{self.pixels.shape[0]} {self.mode})"


def mapped(descriptor: Any) -> np.ndarray | None:
    """A segment's pixels as a read-only (height, width[, channels]) array, or None when what the descriptor names
    is not that segment (a server on another host or PID namespace, one closed already): read the PNG instead."""
    try:
        pid, fd, device, inode, size, width, height = (int(descriptor[k]) for k in (
            "pid", "fd", "device", "inode", "size", "width", "height"))
        mode = descriptor["mode"]
        if descriptor.get("version") != VERSION or mode not in MODES or size != width * height * MODES[mode]:
            return None
        path = f"/proc/{pid}/fd/{fd}"
        if not os.readlink(path).startswith(MEMFD_NAME):
            return None
        handle = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            found = os.fstat(handle)
            if (not stat.S_ISREG(found.st_mode) or (found.st_dev, found.st_ino, found.st_size) != (device, inode, size)
                    or fcntl.fcntl(handle, fcntl.F_GET_SEALS) & SEALS != SEALS):
                return None
            region = mmap.mmap(handle, size, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(handle)  # the mapping keeps the segment; this process holds no descriptor
    except (OSError, KeyError, TypeError, ValueError):
        return None
    channels = MODES[mode]
    return np.frombuffer(region, np.uint8).reshape((height, width) if channels == 1 else (height, width, channels))


async def shared_parts(result: Any, read_png: Callable[[str], Awaitable[bytes]]) -> list[ImagePart]:
    """The image of a reply that came as a segment; one this process cannot map is read through the image://
    resource instead (`read_png(image_id)`)."""
    descriptor = result.meta[CAPABILITY]
    image, mode, side = str(descriptor.get("image")), str(descriptor.get("mode")), descriptor.get("max_preview_side")
    pixels = mapped(descriptor)
    if pixels is None:
        with Image.open(io.BytesIO(await read_png(image))) as opened:
            pixels = np.asarray(opened.convert(mode) if opened.mode != mode else opened)
    return [SharedImagePart(image, pixels, mode, int(side))]
