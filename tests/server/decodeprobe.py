"""Run as a script: decode one image per mode and format, printing (as JSON) each decode's admitted work and its
measured peak resident memory above what the process held before.

A separate process, so the peak (VmHWM, reset through /proc/self/clear_refs before each decode) is this
decode's alone; glibc's mmap threshold is pinned as the server pins it, so freed buffers leave at once.

The modes are Pillow's (https://pillow.readthedocs.io/en/stable/handbook/concepts.html#modes), each saved in a
format that keeps it (https://pillow.readthedocs.io/en/stable/handbook/image-file-formats.html): 1, L, P, LA,
PA, I;16, I;16B, I and F survive TIFF; PNG keeps 16-bit grey and palettes with transparency; JPEG and TIFF keep
CMYK; TIFF keeps LAB and YCbCr.
"""

from __future__ import annotations

import gc
import io
import json
import sys
from pathlib import Path

from PIL import Image

from trompe_server.admission import return_freed_pixels_to_the_os
from trompe_server.imageio import decode_image

SIZE = (3000, 2000)
ORIENTATION = 0x0112
# (label, mode made, format, save options; `fill` is the colour the image is made with)
CASES = [
    ("1-bit PNG", "1", "PNG", {}),
    ("grey PNG", "L", "PNG", {}),
    ("palette PNG", "P", "PNG", {}),
    ("palette PNG, transparent index", "P", "PNG", {"transparency": 0}),
    ("grey+alpha PNG", "LA", "PNG", {}),
    ("RGB PNG", "RGB", "PNG", {}),
    ("RGBA PNG, transparent", "RGBA", "PNG", {}),
    ("RGBA PNG, opaque (worked on as RGB)", "RGBA", "PNG", {"fill": (9, 8, 7, 255)}),
    ("16-bit grey PNG", "I;16", "PNG", {}),
    ("palette+alpha TIFF", "PA", "TIFF", {"compression": "tiff_adobe_deflate"}),
    ("16-bit big-endian TIFF", "I;16B", "TIFF", {"compression": "tiff_adobe_deflate"}),
    ("32-bit integer TIFF", "I", "TIFF", {"compression": "tiff_adobe_deflate"}),
    ("32-bit float TIFF", "F", "TIFF", {"compression": "tiff_adobe_deflate"}),
    ("CMYK TIFF", "CMYK", "TIFF", {"compression": "tiff_adobe_deflate"}),
    ("LAB TIFF", "LAB", "TIFF", {}),
    ("YCbCr TIFF", "YCbCr", "TIFF", {}),
    ("CMYK JPEG", "CMYK", "JPEG", {}),
    ("grey JPEG", "L", "JPEG", {}),
    ("rotated JPEG (EXIF orientation 6)", "RGB", "JPEG", {"exif": ORIENTATION}),
    ("RGB WEBP", "RGB", "WEBP", {}),
    ("RGBA WEBP", "RGBA", "WEBP", {"lossless": True}),
    ("palette GIF", "P", "GIF", {}),
    ("1-bit BMP", "1", "BMP", {}),
]


def encoded(mode: str, fmt: str, options: dict) -> bytes:
    options = dict(options)
    im = Image.new(mode, SIZE, options.pop("fill", 1 if mode in ("1", "P", "PA") else None))
    if options.get("exif") == ORIENTATION:
        exif = Image.Exif()
        exif[ORIENTATION] = 6
        options = {"exif": exif.tobytes()}
    buf = io.BytesIO()
    im.save(buf, format=fmt, **options)
    return buf.getvalue()


def status(field: str) -> int:
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(field))
    return int(line.split()[1]) * 1024


def main() -> None:
    return_freed_pixels_to_the_os()
    rows = []
    for label, mode, fmt, options in CASES:
        data = encoded(mode, fmt, options)
        admitted: dict = {}
        gc.collect()
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM back to the current RSS
        before = status("VmRSS:")
        out = decode_image(data, 10**9,
                           admit=lambda nbytes, argument, size, work, seen=admitted: seen.update(work=work))
        peak = status("VmHWM:") - before
        decoded = Image.open(io.BytesIO(data)).mode
        rows.append({"label": label, "decoded": decoded, "out": out.mode, "work": admitted["work"], "peak": peak})
        del out
    json.dump(rows, sys.stdout)


if __name__ == "__main__":
    main()
