"""Benchmark: what the memory registry's whole-image copies cost a call, before and after it kept Image objects.

Before, an image was stored as its raw bytes (`tobytes()`) and every read rebuilt it (`frombytes()`); now RAM
keeps the Image itself: a crop reads the shared image, a draw copies it (`Image.copy()`), and only an image that
spills to disk is serialised, by Pillow's raw encoder straight into the file instead of 8 MB bands cropped and
serialised one by one. CPU time of this process, interleaved, medians; every stage is pixel-checked once.

    python bench/registry_copies.py --repeat 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageFile
from sample_images import photo

SIZES = [(1024, 1024), (4000, 3000), (8000, 6000)]


def stages(im: Image.Image, spill: Path) -> dict[str, Callable[[], object]]:
    """Each stage of a call, as it was and as it is, on an RGB image `im`."""
    raw = im.tobytes()
    box = (im.width // 4, im.height // 4, 3 * im.width // 4, 3 * im.height // 4)
    rows = max(1, (8 << 20) // (im.width * 3))

    def bands() -> None:
        with spill.open("wb") as file:
            for top in range(0, im.height, rows):
                file.write(im.crop((0, top, im.width, min(im.height, top + rows))).tobytes())

    def encoder() -> None:
        with spill.open("wb") as file:
            ImageFile._save(im, file, [ImageFile._Tile("raw", (0, 0, *im.size), 0, (im.mode, 0, 1))])

    return {
        "store: tobytes (before)": im.tobytes,
        "store: keep the Image (now)": lambda: im,
        "crop: frombytes, then crop (before)": lambda: Image.frombytes(im.mode, im.size, raw).crop(box),
        "crop: crop the shared Image (now)": lambda: im.crop(box),
        "draw: frombytes, the copy to draw on (before)": lambda: Image.frombytes(im.mode, im.size, raw),
        "draw: Image.copy (now)": im.copy,
        "spill: 8 MB bands, crop + tobytes (before)": bands,
        "spill: raw encoder into the file (now)": encoder,
    }


def check(im: Image.Image, spill: Path, work: dict[str, Callable[[], object]]) -> None:
    """Every way gives the same pixels: the rebuilt images, the crops and both spill files."""
    raw = im.tobytes()
    assert work["store: tobytes (before)"]() == raw
    assert work["draw: frombytes, the copy to draw on (before)"]().tobytes() == raw
    assert work["draw: Image.copy (now)"]().tobytes() == raw
    before, now = work["crop: frombytes, then crop (before)"](), work["crop: crop the shared Image (now)"]()
    assert before.tobytes() == now.tobytes()
    for way in ("spill: 8 MB bands, crop + tobytes (before)", "spill: raw encoder into the file (now)"):
        work[way]()
        assert spill.read_bytes() == raw, way


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds per size (default 7)")
    args = parser.parse_args()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"\nCPU ms of this process, median of {args.repeat} interleaved rounds; load average at the start {load}\n")
    print("| size | stage | median CPU ms | × before |")
    print("|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        spill = Path(tmp) / "spill.raw"
        for width, height in SIZES:
            im = Image.fromarray(photo(width, height))
            work = stages(im, spill)
            check(im, spill, work)
            times: dict[str, list[float]] = {name: [] for name in work}
            for _ in range(args.repeat):
                for name, stage in work.items():
                    start = time.process_time()
                    stage()
                    times[name].append(time.process_time() - start)
            medians = {name: statistics.median(t) * 1000 for name, t in times.items()}
            names = list(work)
            for before, now in zip(names[::2], names[1::2]):
                print(f"| {width}x{height} | {before} | {medians[before]:.1f} | 1.00× |")
                print(f"| {width}x{height} | {now} | {medians[now]:.1f} | {medians[now] / medians[before]:.2f}× |")


if __name__ == "__main__":
    main()
