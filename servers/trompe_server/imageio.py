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

from PIL import Image

from .admission import BAND_PIXELS, PIXEL_BYTES, decode_work, wide_grey
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
    if not roots:
        raise ToolInputError(argument, f"{source!r}: this server opens no files by path (started without --root "
                             "where the working directory is no safe root); send the image inline as a data: URL or "
                             "base64, or start the server with --root FOLDER")
    path = Path(source).expanduser()
    if not path.is_absolute():
        path = roots[0] / path
    try:
        resolved = path.resolve()
    except RuntimeError:  # how Python 3.11 reports a loop of symbolic links
        raise ToolInputError(argument, _LOOP.format(source=source)) from None
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
        if not path.exists():  # still a loop (later Pythons resolve one without an error)
            raise ToolInputError(argument, _LOOP.format(source=source)) from None
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


_LOOP = ("{source!r} is a loop of symbolic links (a link that leads back to itself); accepted: a file under "
         "the roots, or a link to one")


def _open_beneath(root: Path, parts: tuple[str, ...]) -> int:
    """Open root/parts one component at a time without following links, so a swapped-in link fails (ELOOP)."""
    if not parts:
        raise IsADirectoryError(str(root))
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
    # folders opened as paths: crossing one needs only search permission, as the path's own lookup would
    folder_flags = os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY
    folder = os.open(root, folder_flags)
    try:
        for part in parts[:-1]:
            inner = os.open(part, folder_flags | os.O_NOFOLLOW, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=folder)  # a FIFO must not block the open
    finally:
        os.close(folder)


def decode_image(data: bytes, max_pixels: int, argument: str = "source",
                 admit: Callable[..., None] | None = None) -> Image.Image:
    """Decode PNG/JPEG/WEBP/BMP/GIF/TIFF bytes to RGB or RGBA, refusing bombs and truncated files.

    `admit(nbytes, argument, size, work)` hears, before any pixel is decoded, the bytes the working copy
    will take (Pillow keeps RGB as 4 bytes a pixel) and the peak bytes of the whole decode for this mode and
    bit depth (admission.decode_work), and may refuse or wait for memory.
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
        work = decode_work(im.mode, im.size, webp=im.format == "WEBP", transposed=_may_turn(im))
        admit(width * height * PIXEL_BYTES, argument, (width, height), work)
    try:
        if im.format == "JPEG":
            _check_jpeg(data)
        im.seek(0)
        im.load()
        turn = _TURNS.get(im.getexif().get(ORIENTATION, 1))
        if wide_grey(im.mode):  # made 8-bit first, so the wide decoded pixels and the working copy never coexist
            im = _banded(im, "L", _eight_bit)
        out = to_rgb(im)
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ToolInputError(argument, f"image data is truncated or corrupt ({exc})") from None
    del im  # the decoded pixels go before the rotation makes another full-size copy
    return out if turn is None else out.transpose(turn)


ORIENTATION = 0x0112  # the EXIF tag saying how the camera was held
_TURNS = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
          5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
          8: Image.Transpose.ROTATE_90}  # what ImageOps.exif_transpose does for each orientation


def _may_turn(im: Image.Image) -> bool:
    """Whether an EXIF rotation may follow the decode, judged before any pixel is read.

    A PNG's eXIf chunk may come after its pixels, where only decoding finds it: a PNG is assumed to turn.
    """
    if im.format == "PNG":
        return True
    return im.getexif().get(ORIENTATION, 1) in _TURNS


def _check_jpeg(data: bytes) -> None:
    """Raise ValueError on libjpeg's warnings: Pillow fills a truncated scan with grey and reports nothing.

    Decoded at 1/8 scale in grey, so the check costs a fraction of the real decode's time and memory.
    """
    import simplejpeg  # lazily: it loads numpy, which a stdio server lists its tools without

    simplejpeg.decode_jpeg(data, colorspace="GRAY", strict=True, min_height=1, min_width=1)


ALPHA_MODES = ("RGBA", "LA", "PA", "La", "RGBa")


def to_rgb(im: Image.Image) -> Image.Image:
    """RGBA when some pixel is transparent, RGB otherwise: the two modes tools work in.

    Converted band by band, so the source and the result are the only full-size copies: 16-bit and 32-bit
    greys (I;16*, I, F) map to 8 bits exactly where the values are 8-bit colours (v*257 and 0..255).
    """
    mode = "RGBA" if _transparent(im) else "RGB"
    if im.mode == mode:
        return im
    return _banded(im, mode, lambda band: _to_mode(_eight_bit(band), mode))


def _to_mode(band: Image.Image, mode: str) -> Image.Image:
    """One 8-bit band in the working mode, through RGBA where it carries alpha."""
    if band.mode == "La":  # Pillow converts premultiplied grey only to LA
        band = band.convert("LA")
    if band.mode in ALPHA_MODES or band.mode == "P" and "transparency" in band.info:
        band = band.convert("RGBA")
    return band.convert(mode)


def _banded(im: Image.Image, mode: str, convert: Callable[[Image.Image], Image.Image]) -> Image.Image:
    """A new `mode` image made from `im` a band of rows at a time, so no full-size temporary is made."""
    out = Image.new(mode, im.size)
    rows = max(1, BAND_PIXELS // max(1, im.width))
    for top in range(0, im.height, rows):
        out.paste(convert(im.crop((0, top, im.width, min(im.height, top + rows)))), (0, top))
    return out


def _transparent(im: Image.Image) -> bool:
    """Whether some pixel is less than opaque, read without a full-size copy."""
    if im.mode in ALPHA_MODES:
        return im.getextrema()[-1][0] < 255
    if im.mode == "P" and "transparency" in im.info:
        alpha = _palette_alpha(im)
        return any(count and alpha[index] < 255 for index, count in enumerate(im.histogram()[:256]))
    return False


def _palette_alpha(im: Image.Image) -> list[int]:
    """The alpha of each palette index of a P image with a transparency entry."""
    transparency = im.info["transparency"]
    if isinstance(transparency, bytes):
        return list(transparency) + [255] * (256 - len(transparency))
    return [0 if index == transparency else 255 for index in range(256)]


def _eight_bit(im: Image.Image) -> Image.Image:
    """Map 16-bit and 32-bit greyscale to 8 bits: round(v/257) for integers (no ties: 257 is odd), round(v)
    for floats, clipped to 0..255."""
    if not wide_grey(im.mode):
        return im
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    if im.mode != "F":
        values = np.asarray(im).astype(np.int64)
        values += 128
        values //= 257
    else:
        values = np.nan_to_num(np.asarray(im).astype(np.float32), copy=False, nan=0.0)
        np.rint(values, out=values)
    return Image.fromarray(np.clip(values, 0, 255, out=values).astype(np.uint8), "L")
