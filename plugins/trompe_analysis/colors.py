"""Exact colour readings at points, and masks of where a colour occurs."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from PIL import Image
from pydantic import Field
from trompe_draw.marks import composite, ink, label, new_layer
from trompe_server import (
    Color,
    ImageId,
    Point,
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_point,
    check_range,
)

MAX_POINTS = 12
MAX_RADIUS = 50
DIM = 0.25  # brightness left to non-matching pixels in isolate_color's "keep" output


def disc(pixels: np.ndarray, x: int, y: int, radius: float) -> np.ndarray:
    """The pixels whose centres lie within `radius` of pixel (x, y), clipped to the image, one per row."""
    reach = int(radius)
    top, left = max(0, y - reach), max(0, x - reach)
    window = pixels[top:y + reach + 1, left:x + reach + 1]
    rows, cols = np.ogrid[top:top + window.shape[0], left:left + window.shape[1]]
    return window[(cols - x) ** 2 + (rows - y) ** 2 <= radius**2]


def sample_color(ctx: ToolContext, image: ImageId,
                 points: Annotated[list[Point], Field(min_length=1, description=f"1 to {MAX_POINTS} points "
                                                                                "[x, y] to sample")],
                 radius: Annotated[float, Field(description=f"0 = the single pixel at each point; otherwise the "
                                                            f"mean over a disc of this radius, up to {MAX_RADIUS}")]
                 = 0) -> ToolOutput:
    """Read exact colours at points: hex, RGB mean and spread (std), to compare colours numerically.

    Values are the image's own pixels (no smoothing); a point names the pixel that contains it. A
    difference of even one level (#8F8F8F vs #909090) is a real difference. The new image marks each
    sampled spot with a ring and its label A, B, ...
    """
    if not 1 <= len(points) <= MAX_POINTS:
        raise ToolInputError("points", f"{len(points)} points given; accepted: 1 to {MAX_POINTS}")
    radius = check_range(radius, 0, MAX_RADIUS, "radius")
    im = ctx.image(image)
    pixels = np.asarray(im)
    spots = [check_point(p, im.size, f"points[{i}]") for i, p in enumerate(points)]
    layer, draw = new_layer(im)
    samples, lines = [], []
    for i, (px, py) in enumerate(spots):
        x, y = min(int(px), im.width - 1), min(int(py), im.height - 1)
        values = disc(pixels, x, y, radius).astype(np.float64)
        mean, std = values.mean(axis=0), values.std(axis=0)
        rgb = [int(v) for v in np.floor(mean[:3] + 0.5)]
        sample = {"label": chr(65 + i), "point": [x, y], "hex": "#{:02X}{:02X}{:02X}".format(*rgb), "rgb": rgb,
                  "mean": [round(float(v), 2) for v in mean[:3]], "std": [round(float(v), 2) for v in std[:3]],
                  "pixels": len(values)}
        if im.mode == "RGBA":
            sample["alpha"] = round(float(mean[3]), 2)
        samples.append(sample)
        lines.append(f"{sample['label']} ({x}, {y}): {sample['hex']} rgb({', '.join(map(str, rgb))}) "
                     f"mean {tuple(sample['mean'])} std {tuple(sample['std'])} over {len(values)} px")
        ring = radius + 3
        draw.ellipse((x - ring - 1, y - ring - 1, x + ring + 1, y + ring + 1), outline=(0, 0, 0, 255), width=1)
        draw.ellipse((x - ring, y - ring, x + ring, y + ring), outline=(255, 255, 255, 255), width=1)
        label(draw, (x + ring + 3, y - ring - 3), sample["label"], 14)
    out = composite(im, layer, "points")
    return ToolOutput(f"colours of {image}:\n" + "\n".join(lines), out, {"samples": samples})


def isolate_color(ctx: ToolContext, image: ImageId, color: Color,
                  tolerance: Annotated[int, Field(description="how far each of R, G, B may differ from the "
                                                              "colour, 0 (exact) to 255")] = 40,
                  output: Annotated[Literal["mask", "keep"],
                                    Field(description="'mask': matches white, the rest black; 'keep': matches "
                                                      "in their own colour, the rest dimmed")] = "mask"
                  ) -> ToolOutput:
    """Show where a colour occurs (e.g. the figure in a colour-blindness plate) and what fraction matches.

    A pixel matches when each of its R, G and B lies within `tolerance` of the colour's.
    """
    target = np.array(ink(color)[:3], dtype=np.int16)
    tolerance = int(check_range(tolerance, 0, 255, "tolerance"))
    im = ctx.image(image)
    pixels = np.asarray(im)
    match = (np.abs(pixels[..., :3].astype(np.int16) - target) <= tolerance).all(axis=-1)
    if output == "mask":
        out = Image.fromarray(np.where(match, 255, 0).astype(np.uint8), "L").convert("RGB")
    else:
        kept = pixels.copy()
        kept[~match, :3] = np.floor(kept[~match, :3] * DIM + 0.5).astype(np.uint8)
        out = Image.fromarray(kept, im.mode)
    fraction = float(match.mean())
    return ToolOutput(f"{color} +/-{tolerance} in {image}: {int(match.sum())} of {match.size} pixels match "
                      f"({fraction:.2%})", out,
                      {"matched": int(match.sum()), "total": int(match.size), "fraction": round(fraction, 6)})


TOOLS = [sample_color, isolate_color]
