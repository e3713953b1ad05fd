"""Image helpers shared by the tests (a unique module name: `conftest` is ambiguous across folders)."""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image


def png_bytes(im: Image.Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


def data_url(im: Image.Image) -> str:
    return "data:image/png;base64," + base64.b64encode(png_bytes(im)).decode()


def gradient(width: int = 64, height: int = 48) -> Image.Image:
    """An image whose every pixel differs, so any shift or resample shows."""
    im = Image.new("RGB", (width, height))
    im.putdata([((x * 4) % 256, (y * 5) % 256, (x + y) % 256) for y in range(height) for x in range(width)])
    return im


def result_image(result) -> Image.Image:
    """The PNG a tool result carries, decoded."""
    blocks = [b for b in result.content if b.type == "image"]
    assert blocks, [b.type for b in result.content]
    return Image.open(io.BytesIO(base64.b64decode(blocks[0].data)))


def noise(size: tuple[int, int], mode: str = "RGB", seed: int = 7, min_alpha: int = 0) -> Image.Image:
    """Every pixel random: a crop from the wrong place cannot pass by accident, and nothing compresses.
    `min_alpha`: the least alpha of an RGBA image's pixels."""
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (size[1], size[0], len(mode)), dtype=np.uint8)
    if mode == "RGBA" and min_alpha:
        pixels[..., 3] = rng.integers(min_alpha, 256, (size[1], size[0]), dtype=np.uint8)
    return Image.fromarray(pixels, mode)
