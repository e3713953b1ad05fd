"""Redis memory of one session (a 256x256 image and two 128x128 crops), pixels stored raw vs as stored, against PNG.

Stored is what the Redis registry keeps (redis_storage.stored_form: the reply's own PNG, PNG's "Up" row filter then
ISA-L deflate; zlib-ng level 3 of the same rows before issue 40); raw is what it stored before that. Redis memory is
MEMORY USAGE summed over the session's keys (records, order, pixels, reference counts, request ids), so Redis's own
per-key overhead is counted. PNG is Pillow's default.
Images: a gradient, a line drawing, a blurred random texture, noise, and any image files given (scaled to 256).

    python bench/redis_pixel_bytes.py [IMAGE ...]   # starts its own redis-server on a free port
"""

from __future__ import annotations

import io
import shutil
import sys
import tempfile

import numpy as np
import redis
from PIL import Image, ImageDraw, ImageFilter

from redis_local import start_redis
from trompe_server import redis_storage
from trompe_server.limits import Limits
from trompe_server.redis_storage import RedisStorage
from trompe_server.registry import Registry

SHARED = (b"trompe:sessions", b"trompe:owners", b"trompe:holders", b"trompe:c:")  # kept once, not per session


def images(paths: list[str]) -> dict[str, Image.Image]:
    rng = np.random.default_rng(0)
    gradient = Image.fromarray(np.dstack([np.tile(np.linspace(0, 255, 256, dtype=np.uint8), (256, 1))] * 3))
    drawing = Image.new("RGB", (256, 256), "white")
    pen = ImageDraw.Draw(drawing)
    for i in range(0, 256, 16):
        pen.line([(i, 0), (255 - i, 255)], fill=(i, 0, 255 - i), width=2)
    texture = Image.fromarray(rng.integers(0, 255, (64, 64, 3), dtype=np.uint8)).resize((256, 256), Image.BICUBIC)
    noise = Image.fromarray(rng.integers(0, 255, (256, 256, 3), dtype=np.uint8))
    files = {path: Image.open(path).convert("RGB").resize((256, 256)) for path in paths}
    blurred = texture.filter(ImageFilter.GaussianBlur(2))
    return {"gradient": gradient, "line drawing": drawing, "blurred texture": blurred, "noise": noise, **files}


def session_bytes(client: redis.Redis) -> int:
    return sum(client.memory_usage(key) or 0 for key in client.scan_iter("trompe:*") if not key.startswith(SHARED))


def png_bytes(im: Image.Image) -> int:
    buffer = io.BytesIO()
    im.save(buffer, "PNG")
    return len(buffer.getvalue())


def stored(url: str, client: redis.Redis, im: Image.Image, raw: bool) -> int:
    client.flushall()
    stored_form = redis_storage.stored_form
    if raw:
        redis_storage.stored_form = lambda im, data, digest: (digest, data)
    try:
        storage = RedisStorage(url, 1 << 30)
        registry = Registry(Limits(), storage)
        session, _ = registry.open_session("local", "original", im, "bench")
        for box in ((0, 0, 128, 128), (64, 64, 192, 192)):
            registry.add_output(session, im.crop(box), "crop", {"box": list(box)}, ("original",))
        storage.close()
    finally:
        redis_storage.stored_form = stored_form
    return session_bytes(client)


def main() -> None:
    folder = tempfile.mkdtemp()
    proc, url = start_redis(folder)
    client = redis.Redis.from_url(url)
    try:
        print(f"{'image':24s} {'raw':>9s} {'stored':>9s} {'PNGs':>9s} {'stored/PNG':>10s}")
        for label, im in images(sys.argv[1:]).items():
            raw, kept = stored(url, client, im, True), stored(url, client, im, False)
            pngs = png_bytes(im) + sum(png_bytes(im.crop(b)) for b in ((0, 0, 128, 128), (64, 64, 192, 192)))
            print(f"{label[-24:]:24s} {raw:9d} {kept:9d} {pngs:9d} {kept / pngs:10.2f}")
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
