"""What leaves the server: lossless PNG bytes and the downscaled preview a model is shown.

The PNG is built here rather than by Pillow because encoding was most of a tool call's time: a numpy "Up"
row filter plus ISA-L's fast deflate decodes to the same pixels several times faster (the measurement
behind this choice is bench/png_encoders.py; bench/README.md says why).
"""

from __future__ import annotations

import struct

from isal import isal_zlib
from PIL import Image

# ISA-L level 1 (Intel's SIMD deflate, python-isal): about 0.65x the CPU of zlib-ng's level 1 on photographs
# and 28% fewer bytes (55% fewer on drawings), so every later stage (base64, pipe, the client's JSON) pays
# less too. A result is sent once over a local pipe, where time matters more than the last bytes.
LEVEL = 1
SIGNATURE = b"\x89PNG\r\n\x1a\n"
COLOUR_TYPES = {"L": 0, "RGB": 2, "LA": 4, "RGBA": 6}  # PNG colour type of each 8-bit mode written as-is
UP = 2  # PNG filter type: each byte minus the byte above it


def encode_png(im: Image.Image) -> bytes:
    """Lossless 8-bit PNG of an L, LA, RGB or RGBA image (other modes are converted to RGB/RGBA first)."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    if im.mode not in COLOUR_TYPES:
        im = im.convert("RGBA" if im.has_transparency_data else "RGB")
    pixels = np.asarray(im).reshape(im.height, -1)
    rows = np.empty((im.height, pixels.shape[1] + 1), np.uint8)
    rows[:, 0] = UP
    rows[0, 1:] = pixels[0]
    np.subtract(pixels[1:], pixels[:-1], out=rows[1:, 1:])  # uint8 arithmetic wraps modulo 256, as PNG wants
    header = struct.pack(">IIBBBBB", im.width, im.height, 8, COLOUR_TYPES[im.mode], 0, 0, 0)
    return b"".join((SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", isal_zlib.compress(rows, LEVEL)),
                     _chunk(b"IEND", b"")))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", isal_zlib.crc32(data, isal_zlib.crc32(kind)))


def preview(im: Image.Image, max_side: int) -> Image.Image:
    """The image as sent to a model: unchanged, or downscaled so its long side is max_side.

    A box reduction by the whole factor, then a bilinear (triangle, antialiasing) filter for the rest: a
    fraction of the time of Lanczos over the full image, and within about a grey level of it.
    """
    size = preview_size(im.size, max_side)
    return im if size == im.size else im.resize(size, Image.Resampling.BILINEAR, reducing_gap=1.0)


def preview_size(size: tuple[int, int], max_side: int) -> tuple[int, int]:
    """The size preview() gives an image of `size`."""
    if max(size) <= max_side:
        return size
    scale = max_side / max(size)
    return max(1, round(size[0] * scale)), max(1, round(size[1] * scale))
