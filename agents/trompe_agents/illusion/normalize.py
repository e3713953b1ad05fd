"""Optional preprocessing against compression artefacts: snap near-flat colours back onto their palette.

Synthetic illusion images are drawn with a handful of exact colours; JPEG re-encoding smears each one into a
cloud of nearby values and rings at edges. We find the palette (the colours that are the most frequent value
within `tolerance` levels of themselves and cover at least `min_share` of the pixels) and move every pixel
that lies within `tolerance` levels (per channel) of a palette colour onto it. Pixels further from every
palette colour -- gradients, anti-aliased edges, thin lines of a rare colour, real detail -- are left as they
are, and two palette colours more than `tolerance` apart are never merged, so a real difference of a few grey
levels (the counterfactual in a colour question) survives while compression noise of a level or two does not.
No blur is applied: a median filter would erase one-pixel lines that line questions depend on.

The image is worked through in bands of rows (each with `radius` rows of context above and below, so the result
is the same as for the whole image at once), one palette colour at a time: memory stays a few times the band, not
64 palette colours times the image (about 3 GB of working arrays for a 12-megapixel photograph).
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


BAND_PIXELS = 1 << 20  # pixels per band of rows: ~50 MB of working arrays, whatever the image size or palette


def palette(pixels: np.ndarray, tolerance: int, min_share: float, max_colours: int = 64) -> np.ndarray:
    """Dominant exact colours: frequent enough, and each the most frequent within `tolerance` of itself."""
    flat = pixels.reshape(-1, 3)
    packed = (flat[:, 0].astype(np.int32) << 16) | (flat[:, 1].astype(np.int32) << 8) | flat[:, 2]
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
    """Count of true pixels in the (2r+1)^2 window around each pixel (edges clipped), as sums of shifted rows
    and then columns in the smallest type that holds a full window (bytes for radius 2: a few fast passes)."""
    k = 2 * radius + 1
    kind = np.uint8 if k * k <= 255 else np.int32
    height, width = mask.shape
    padded = np.pad(mask.astype(kind), radius)  # zeros outside the image: they count for nothing
    rows = padded[:, :width].copy()
    for shift in range(1, k):
        rows += padded[:, shift:shift + width]
    counts = rows[:height].copy()
    for shift in range(1, k):
        counts += rows[shift:shift + height]
    return counts


def normalize_image(im: Image.Image, tolerance: int = 3, min_share: float = 0.0005, radius: int = 2
                    ) -> tuple[Image.Image, NormalizeStats]:
    """Snap each pixel to the palette colour that dominates its neighbourhood, if it is close enough.

    A pixel first joins the nearest palette colour within `tolerance`; then every pixel takes the colour
    most of its (2*radius+1)^2 neighbours joined, provided it lies within 2*tolerance of it (JPEG ringing near
    an edge is a few levels further off than the noise inside a region). Pixels far from that colour keep
    their value.
    """
    rgb = np.asarray(im.convert("RGB"))
    colours = palette(rgb, tolerance, min_share)
    out = rgb.copy()
    height, width = rgb.shape[:2]
    rows = max(1, BAND_PIXELS // max(width, 1))
    changed = 0
    for top in range(0, height, rows) if len(colours) else ():
        above, below = min(top, radius), min(height - top - rows, radius)  # context rows around the band
        band = rgb[top - above:top + rows + max(below, 0)].transpose(2, 0, 1).astype(np.int16)  # 3 planes
        snap, majority = _snap(band, colours, tolerance, radius)
        inner = slice(above, above + min(rows, height - top))
        snap, majority = snap[inner], majority[inner]
        out[top:top + rows][snap] = colours[majority[snap]]
        changed += int((out[top:top + rows] != rgb[top:top + rows]).any(axis=2).sum())
    fraction = changed / (height * width) if height * width else float("nan")
    stats = NormalizeStats(["#{:02x}{:02x}{:02x}".format(*c) for c in colours], round(fraction, 4), tolerance)
    return Image.fromarray(out, "RGB"), stats


def _distance(planes: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Each pixel's largest channel difference from `colour` (one value, or one per pixel), channel by channel."""
    distance = np.abs(planes[0] - colour[0])
    for channel in (1, 2):
        np.maximum(distance, np.abs(planes[channel] - colour[channel]), out=distance)
    return distance


def _snap(planes: np.ndarray, colours: np.ndarray, tolerance: int, radius: int) -> tuple[np.ndarray, np.ndarray]:
    """Which pixels of a band (3 int16 planes) snap, and to which colour's index: the nearest colour (the first of
    equals), then the neighbourhood's majority (the first of equals), one colour at a time: a few planes, not k."""
    values = colours.astype(np.int16)
    nearest = np.zeros(planes.shape[1:], dtype=np.int16)
    best = _distance(planes, values[0])
    for i, colour in enumerate(values[1:], 1):
        distance = _distance(planes, colour)
        np.copyto(nearest, i, where=distance < best)
        np.minimum(best, distance, out=best)
    joined = best <= tolerance
    majority = np.zeros_like(nearest)
    most = box_sum(joined & (nearest == 0), radius)
    for i in range(1, len(colours)):
        members = joined & (nearest == i)
        if not members.any():  # a colour absent from this band wins no vote in it
            continue
        votes = box_sum(members, radius)
        np.copyto(majority, i, where=votes > most)
        np.maximum(most, votes, out=most)
    near = _distance(planes, values.T[:, majority]) <= 2 * tolerance
    return near & (most > 0), majority
