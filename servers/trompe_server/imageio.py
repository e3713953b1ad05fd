"""Reading caller-supplied images safely: paths under the roots, inline data, decoding without surprises."""

from __future__ import annotations

import base64
import binascii
import errno
import io
import os
import re
import stat
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import simplejpeg
from PIL import Image, ImageOps

from .errors import LimitError, ToolInputError

FORMATS = ("PNG", "JPEG", "WEBP", "BMP", "GIF", "TIFF")
_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]+={0,2}\s*$")
# How the accepted formats' magic bytes start once base64-encoded: PNG, JPEG, GIF, RIFF (WEBP), BMP, TIFF.
_BASE64_MAGIC = ("iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "Qk", "SUkqA", "TU0AK")


def is_inline(source: str) -> bool:
    """Whether a source carries the image itself (data: URL or base64) rather than naming a file."""
    if source.startswith("data:"):
        return True
    head = source[:4096]
    return bool(_BASE64.match(head)) and (len(source) > 512 or source.startswith(_BASE64_MAGIC))


def read_source(source: str, roots: list[Path], max_bytes: int, argument: str = "source") -> bytes:
    """Return the encoded bytes of a data: URL, a bare base64 string or a file under an allowed root."""
    if source.startswith("data:"):
        header, _, payload = source.partition(",")
        if ";base64" not in header:
            raise ToolInputError(argument, "data: URLs must be base64-encoded (data:image/png;base64,...)")
        return _decode_base64(payload, max_bytes, argument)
    if is_inline(source):
        return _decode_base64(source, max_bytes, argument)
    return _read_path(source, roots, max_bytes, argument)


def _decode_base64(payload: str, max_bytes: int, argument: str) -> bytes:
    if len(payload) * 3 // 4 > max_bytes:
        raise LimitError(argument, f"encoded image is over the {max_bytes} byte limit (max_source_bytes)")
    try:
        return base64.b64decode(payload, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ToolInputError(argument, f"not valid base64 ({exc})") from None


def _read_path(source: str, roots: list[Path], max_bytes: int, argument: str) -> bytes:
    if "\x00" in source:
        raise ToolInputError(argument, "contains a NUL character; accepted: a file path under the roots, "
                             "a data: URL or base64 image bytes")
    path = Path(source).expanduser()
    if not path.is_absolute():
        path = roots[0] / path
    try:
        resolved = path.resolve()
    except OSError:  # a link swapped in or out while it was being resolved
        raise ToolInputError(argument, f"{source!r} changed while it was being opened; try again") from None
    root = next((r.resolve() for r in roots if resolved.is_relative_to(r.resolve())), None)
    if root is None:
        allowed = ", ".join(str(r) for r in roots)
        raise ToolInputError(argument, f"{source!r} is outside the allowed roots ({allowed}); "
                             "start the server with --root DIR to allow another folder")
    missing = (f"no such file: {source!r} (relative paths are read from {roots[0]}; "
               "inline images must be data: URLs or base64)")
    try:
        fd = _open_beneath(root, resolved.relative_to(root).parts)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise ToolInputError(argument, missing) from None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise ToolInputError(argument, f"cannot read {source!r}: {exc.strerror}") from None
        raise ToolInputError(argument, f"{source!r} changed into a symbolic link while it was opened; "
                             "links are only followed when they already exist: try again") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())  # the opened file, not whatever the path names by now
        if not stat.S_ISREG(info.st_mode):
            raise ToolInputError(argument, missing)
        if info.st_size > max_bytes:
            raise LimitError(argument, f"file is {info.st_size} bytes, over the {max_bytes} byte limit "
                             "(max_source_bytes)")
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise LimitError(argument, f"file is over the {max_bytes} byte limit (max_source_bytes)")
    return data


def _open_beneath(root: Path, parts: tuple[str, ...]) -> int:
    """Open root/parts one component at a time without following links, so a swapped-in link fails (ELOOP)."""
    if not parts:
        raise IsADirectoryError(str(root))
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
    folder = os.open(root, os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            inner = os.open(part, flags | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=folder)  # a FIFO must not block the open
    finally:
        os.close(folder)


def decode_image(data: bytes, max_pixels: int, argument: str = "source",
                 admit: Callable[[int, str, tuple[int, int]], None] | None = None) -> Image.Image:
    """Decode PNG/JPEG/WEBP/BMP/GIF/TIFF bytes to RGB or RGBA, refusing bombs and truncated files.

    `admit` hears the bytes the decoded pixels will take (Pillow keeps RGB as 4 bytes a pixel) before any
    pixel is decoded, and may refuse or wait for memory.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data), formats=FORMATS)
    except Image.DecompressionBombError:
        raise LimitError(argument, "image declares far more pixels than allowed (decompression bomb); "
                         f"accepted: up to {max_pixels} pixels (max_pixels)") from None
    except (OSError, SyntaxError, ValueError):
        raise ToolInputError(argument, f"not a readable image; accepted formats: {', '.join(FORMATS)}") from None
    width, height = im.size
    if width * height > max_pixels:
        raise LimitError(argument, f"image is {width}x{height} = {width * height} pixels, "
                         f"over the {max_pixels} pixel limit (max_pixels)")
    if admit is not None:
        admit(width * height * 4, argument, (width, height))
    try:
        if im.format == "JPEG":
            _check_jpeg(data)
        im.seek(0)
        im.load()
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ToolInputError(argument, f"image data is truncated or corrupt ({exc})") from None
    im = _eight_bit(im)
    ImageOps.exif_transpose(im, in_place=True)  # in place: a copy of a 50 MP image is 200 MB more at the peak
    return to_rgb(im)


def _check_jpeg(data: bytes) -> None:
    """Raise ValueError on libjpeg's warnings: Pillow fills a truncated scan with grey and reports nothing.

    Decoded at 1/8 scale in grey, so the check costs a fraction of the real decode's time and memory.
    """
    simplejpeg.decode_jpeg(data, colorspace="GRAY", strict=True, min_height=1, min_width=1)


def _eight_bit(im: Image.Image) -> Image.Image:
    """Map 16-bit and float greyscale to 8 bits exactly where the values are 8-bit colours (v*257)."""
    if im.mode.startswith("I;16") or im.mode == "I":
        arr = np.asarray(im, dtype=np.float64)
        out = Image.fromarray(np.clip(np.rint(arr / 257.0), 0, 255).astype(np.uint8), "L")
    elif im.mode == "F":
        out = Image.fromarray(np.clip(np.rint(np.asarray(im)), 0, 255).astype(np.uint8), "L")
    else:
        return im
    out.info = im.info
    exif = im.getexif()
    if exif:
        out.info["exif"] = exif.tobytes()
    return out


def to_rgb(im: Image.Image) -> Image.Image:
    """RGBA when some pixel is transparent, RGB otherwise: the two modes tools work in."""
    if im.mode == "P" and "transparency" in im.info or im.mode in ("PA", "LA", "La", "RGBa"):
        im = im.convert("RGBA")
    if im.mode == "RGBA":
        if im.getchannel("A").getextrema()[0] == 255:
            return im.convert("RGB")
        return im
    return im if im.mode == "RGB" else im.convert("RGB")
