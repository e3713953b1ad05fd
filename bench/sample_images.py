"""Test pictures shared by the image benchmarks (numpy and Pillow only, so any bench venv can import them)."""

from __future__ import annotations

import numpy as np


def photo(w: int, h: int) -> np.ndarray:
    """Smooth gradients plus mild noise: compresses like a photograph, not like a flat test card."""
    x = np.linspace(0, 255, w, dtype=np.float32)[None, :]
    y = np.linspace(0, 255, h, dtype=np.float32)[:, None]
    noise = np.random.default_rng(0).integers(-6, 7, (h, w), dtype=np.int16)
    rgb = np.empty((h, w, 3), np.uint8)
    for channel, base in enumerate((x + 0 * y, y + 0 * x, (x + y) / 2)):
        rgb[..., channel] = np.clip(base + noise, 0, 255)
    return rgb


def drawing(w: int, h: int) -> np.ndarray:
    """Flat areas and thin lines, like the illusion probes and BlindTest images."""
    rgb = np.full((h, w, 3), 235, np.uint8)
    rgb[h // 4:h // 2, w // 4:w // 2] = (20, 40, 200)
    rgb[::37] = 0
    rgb[:, ::53] = (200, 30, 30)
    return rgb


def flat_regions(w: int, h: int, colours: int, tile: int = 40) -> np.ndarray:
    """Tiles of `colours` flat colours, a third of the pixels off by up to 2 levels: a drawing after lossy
    compression, whose exact colours normalisation finds as its palette."""
    rng = np.random.default_rng(0)
    palette = rng.integers(20, 236, (colours, 3), dtype=np.int16)
    index = rng.integers(0, colours, (h // tile + 1, w // tile + 1))
    noise = rng.integers(-2, 3, (h, w, 3), dtype=np.int16) * (rng.random((h, w, 1)) < 1 / 3)
    return (palette[index.repeat(tile, 0).repeat(tile, 1)[:h, :w]] + noise).astype(np.uint8)
