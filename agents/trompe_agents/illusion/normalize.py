"""Optional preprocessing against compression artefacts: snap near-flat colours back onto their palette.

Synthetic illusion images are drawn with a handful of exact colours; JPEG re-encoding smears each one into a
cloud of nearby values and rings at edges. We find the palette (the colours that are the most frequent value
within `tolerance` levels of themselves and cover at least `min_share` of the pixels) and move every pixel
that lies within `tolerance` levels (per channel) of a palette colour onto it. Pixels further from every
palette colour -- gradients, anti-aliased edges, thin lines of a rare colour, real detail -- are left as they
are, and two palette colours more than `tolerance` apart are never merged, so a real difference of a few grey
levels (the counterfactual in a colour question) survives while compression noise of a level or two does not.
No blur is applied: a median filter would erase one-pixel lines that line questions depend on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image


@dataclass
class NormalizeStats:
    """What normalisation did to one image, recorded in the trace."""

    palette: list[str]
    changed_fraction: float
    tolerance: int


def palette(pixels: np.ndarray, tolerance: int, min_share: float, max_colours: int = 64) -> np.ndarray:
    """Dominant exact colours: frequent enough, and each the most frequent within `tolerance` of itself."""
    flat = pixels.reshape(-1, 3).astype(np.int32)
    packed = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    keep = counts >= max(8, min_share * len(packed))
    values, counts = values[keep], counts[keep]
    order = np.argsort(-counts, kind="stable")
    colours = np.stack([(values >> 16) & 255, (values >> 8) & 255, values & 255], axis=1)[order]
    chosen: list[np.ndarray] = []
    for colour in colours:
        if all(np.abs(colour - c).max() > tolerance for c in chosen):
            chosen.append(colour)
        if len(chosen) == max_colours:
            break
    return np.array(chosen, dtype=np.int32).reshape(-1, 3)


def box_sum(mask: np.ndarray, radius: int) -> np.ndarray:
    """Count of true pixels in the (2r+1)^2 window around each pixel (edges clipped)."""
    padded = np.pad(mask.astype(np.int32), radius + 1)[:-1, :-1]
    table = padded.cumsum(0).cumsum(1)
    k = 2 * radius + 1
    return table[k:, k:] - table[:-k, k:] - table[k:, :-k] + table[:-k, :-k]


def normalize_image(im: Image.Image, tolerance: int = 3, min_share: float = 0.0005, radius: int = 2
                    ) -> tuple[Image.Image, NormalizeStats]:
    """Snap each pixel to the palette colour that dominates its neighbourhood, if it is close enough.

    A pixel first joins the nearest palette colour within `tolerance`; then every pixel takes the colour
    most of its (2*radius+1)^2 neighbours joined, provided it lies within 2*tolerance of it (JPEG ringing near
    an edge is a few levels further off than the noise inside a region). Pixels far from that colour keep
    their value.
    """
    rgb = np.asarray(im.convert("RGB"), dtype=np.int32)
    colours = palette(rgb, tolerance, min_share)
    out = rgb.copy()
    if len(colours):
        distances = np.stack([np.abs(rgb - c).max(axis=2) for c in colours])  # (k, h, w)
        nearest = distances.argmin(axis=0)
        joined = distances.min(axis=0) <= tolerance
        votes = np.stack([box_sum(joined & (nearest == i), radius) for i in range(len(colours))])
        majority = votes.argmax(axis=0)
        near = np.take_along_axis(distances, majority[None], axis=0)[0] <= 2 * tolerance
        snap = near & (votes.max(axis=0) > 0)
        out[snap] = colours[majority[snap]]
    changed = float((out != rgb).any(axis=2).mean())
    stats = NormalizeStats(["#{:02x}{:02x}{:02x}".format(*c) for c in colours], round(changed, 4), tolerance)
    return Image.fromarray(out.astype(np.uint8), "RGB"), stats
