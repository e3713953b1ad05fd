"""Benchmark: lossless PNG encoders for tool results, and the preview downscale, on the same images.

Candidates are the well-kept libraries that can write PNG from numpy/Pillow pixels: Pillow (the former
encoder, zlib level 1), OpenCV, imagecodecs (libpng and libspng), and a numpy "Up" row filter with stdlib zlib,
zlib-ng (the encoder before) or ISA-L (python-isal: trompe's encoder, servers/trompe_server/encode.py). Times
are CPU time of this process, interleaved, so other jobs on a shared box do not count. Every candidate's
output is decoded with Pillow and compared pixel for pixel. OpenCV and imagecodecs are never dependencies of
trompe: run this with the bench-only venv that has them, or with trompe's venv to time just the installed
candidates.

    PYTHONPATH=servers /work/bench-venv/bin/python bench/png_encoders.py --repeat 7
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import statistics
import struct
import time
import zlib
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
from PIL import Image
from sample_images import drawing, photo

ENCODE = Path(__file__).resolve().parents[1] / "servers" / "trompe_server" / "encode.py"


def trompe_encode():
    """trompe's encode module, loaded from its file so this runs in a venv without trompe's dependencies."""
    spec = importlib.util.spec_from_file_location("trompe_encode", ENCODE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pillow(rgb: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def up_filter_png(rgb: np.ndarray, deflate: Callable[[bytes], bytes]) -> bytes:
    """The same numpy Up filter and chunk layout as trompe's encoder, with another deflate library."""
    h, w, c = rgb.shape
    flat = rgb.reshape(h, w * c)
    rows = np.empty((h, w * c + 1), np.uint8)
    rows[:, 0] = 2
    rows[0, 1:] = flat[0]
    np.subtract(flat[1:], flat[:-1], out=rows[1:, 1:])

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", deflate(rows)) + chunk(b"IEND", b"")


def candidates() -> dict[str, Callable[[np.ndarray], bytes]]:
    """Every encoder importable here, Pillow first (the baseline)."""
    encode = trompe_encode()
    found = {"Pillow, zlib level 1 (before)": pillow,
             "numpy Up + stdlib zlib level 1": lambda a: up_filter_png(a, lambda d: zlib.compress(d, 1))}
    try:
        from zlib_ng import zlib_ng

        found["numpy Up + zlib-ng level 2"] = lambda a: up_filter_png(a, lambda d: zlib_ng.compress(d, 2))
        found["numpy Up + zlib-ng level 1 (before)"] = lambda a: up_filter_png(a, lambda d: zlib_ng.compress(d, 1))
    except ImportError:
        pass
    try:
        from isal import isal_zlib

        for level in (0, 1, 2):
            found[f"numpy Up + ISA-L level {level}"] = partial(up_filter_png, deflate=partial(isal_zlib.compress,
                                                                                             level=level))
        # The server's path, from a Pillow image: Image.fromarray here and the tobytes copy in encode_png included
        found[f"trompe encode_png (ISA-L level {encode.LEVEL}) of a Pillow image"] = lambda a: encode.encode_png(
            Image.fromarray(a))
    except ImportError:
        pass
    try:
        import cv2

        def opencv(a: np.ndarray, flags: list[int]) -> bytes:
            return cv2.imencode(".png", cv2.cvtColor(a, cv2.COLOR_RGB2BGR), flags)[1].tobytes()

        found["OpenCV, level 1"] = lambda a: opencv(a, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        sub = [cv2.IMWRITE_PNG_COMPRESSION, 1, cv2.IMWRITE_PNG_FILTER, cv2.IMWRITE_PNG_FILTER_SUB]
        found["OpenCV, level 1, Sub filter"] = lambda a: opencv(a, sub)
    except ImportError:
        pass
    try:
        import imagecodecs

        found["imagecodecs libpng, level 1"] = lambda a: imagecodecs.png_encode(a, level=1)
        found["imagecodecs libspng, level 1"] = lambda a: imagecodecs.spng_encode(a, level=1)
    except ImportError:
        pass
    return found


def timed(fn: Callable[[], object]) -> float:
    """CPU seconds of one call: on a shared box wall time measures the other jobs too."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def encoder_table(repeat: int) -> None:
    images = {"photo 1024x1024": photo(1024, 1024), "drawing 1024x1024": drawing(1024, 1024),
              "photo 1568x1176 (a 12 MP preview)": photo(1568, 1176)}
    encoders = candidates()
    print(f"\nPNG encode, CPU time, median of {repeat} (interleaved); × = CPU against Pillow; every output decoded by "
          "Pillow to the same pixels\n")
    print("| image | encoder | median CPU ms | × Pillow | MB | identical pixels |")
    print("|---|---|---:|---:|---:|---|")
    for name, rgb in images.items():
        samples: dict[str, list[float]] = {e: [] for e in encoders}
        for _ in range(repeat):
            for encoder, fn in encoders.items():
                samples[encoder].append(timed(lambda fn=fn, rgb=rgb: fn(rgb)))
        base = statistics.median(samples[next(iter(encoders))])
        for encoder, fn in encoders.items():
            data = fn(rgb)
            same = np.array_equal(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")), rgb)
            median = statistics.median(samples[encoder])
            print(f"| {name} | {encoder} | {median * 1000:.1f} | {median / base:.2f}× | {len(data) / 1e6:.2f} | "
                  f"{'yes' if same else 'NO'} |")


def preview_table(repeat: int) -> None:
    encode = trompe_encode()
    before = "Lanczos over the full image (before)"
    print(f"\nPreview to a 1568-px long side, CPU time, median of {repeat} (interleaved); difference: mean "
          "absolute, in grey levels, from the former Lanczos preview\n")
    print("| source | method | median CPU ms | × before | difference |")
    print("|---|---|---:|---:|---:|")
    for w, h in ((2000, 1500), (4000, 3000)):
        im = Image.fromarray(photo(w, h))
        size = encode.preview(im, 1568).size

        def resize(kind: Image.Resampling, gap: float | None = None, im=im, size=size) -> Image.Image:
            return im.resize(size, kind, reducing_gap=gap)

        ways = {before: partial(resize, Image.Resampling.LANCZOS),
                "box reduce + Lanczos (reducing_gap=1)": partial(resize, Image.Resampling.LANCZOS, 1.0),
                "box reduce + Hamming (reducing_gap=1)": partial(resize, Image.Resampling.HAMMING, 1.0),
                "box reduce + Bilinear (reducing_gap=1; trompe)": partial(encode.preview, im, 1568)}
        samples: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(repeat):
            for way, fn in ways.items():
                samples[way].append(timed(fn))
        reference = np.asarray(ways[before](), dtype=np.int16)
        base = statistics.median(samples[before])
        for way, fn in ways.items():
            difference = np.abs(np.asarray(fn(), dtype=np.int16) - reference).mean()
            median = statistics.median(samples[way])
            print(f"| {w}x{h} | {way} | {median * 1000:.1f} | {median / base:.2f}× | {difference:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per encoder and image (default 7)")
    args = parser.parse_args()
    encoder_table(args.repeat)
    preview_table(args.repeat)


if __name__ == "__main__":
    main()
