"""Reading caller-supplied images safely and encoding them losslessly."""

from __future__ import annotations

import base64
import binascii
import io
import re
import warnings
from pathlib import Path

import numpy as np
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
    path = Path(source).expanduser()
    if not path.is_absolute():
        path = roots[0] / path
    resolved = path.resolve()
    if not any(resolved.is_relative_to(root.resolve()) for root in roots):
        allowed = ", ".join(str(r) for r in roots)
        raise ToolInputError(argument, f"{source!r} is outside the allowed roots ({allowed}); "
                             "start the server with --root DIR to allow another folder")
    if not resolved.is_file():
        raise ToolInputError(argument, f"no such file: {source!r} (relative paths are read from {roots[0]}; "
                             "inline images must be data: URLs or base64)")
    size = resolved.stat().st_size
    if size > max_bytes:
        raise LimitError(argument, f"file is {size} bytes, over the {max_bytes} byte limit (max_source_bytes)")
    return resolved.read_bytes()


def decode_image(data: bytes, max_pixels: int, argument: str = "source") -> Image.Image:
    """Decode PNG/JPEG/WEBP/BMP/GIF/TIFF bytes to RGB or RGBA, refusing bombs and truncated files."""
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
    try:
        im.seek(0)
        im.load()
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ToolInputError(argument, f"image data is truncated or corrupt ({exc})") from None
    return to_rgb(ImageOps.exif_transpose(_eight_bit(im)))


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


def encode_png(im: Image.Image) -> bytes:
    """Lossless PNG; low zlib effort because these images are sent once and thrown away."""
    buf = io.BytesIO()
    im.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def preview(im: Image.Image, max_side: int) -> Image.Image:
    """The image as sent to a model: unchanged, or downscaled so its long side is max_side."""
    if max(im.size) <= max_side:
        return im
    scale = max_side / max(im.size)
    size = (max(1, round(im.width * scale)), max(1, round(im.height * scale)))
    return im.resize(size, Image.Resampling.LANCZOS)
