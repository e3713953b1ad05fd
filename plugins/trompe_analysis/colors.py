"""Exact colour readings at points, and masks of where a colour occurs."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Literal

from PIL import Image, ImageChops
from pydantic import Field
from trompe_draw.marks import LUMA_BLOCK, ink
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

from .marking import Mark, draw_marks, label_mark, ring_mark

if TYPE_CHECKING:  # for annotations: the functions that use numpy import it when called
    import numpy as np

MAX_POINTS = 12
MAX_RADIUS = 50
DIM = 0.25  # brightness left to non-matching pixels in isolate_color's "keep" output


def disc(im: Image.Image, x: int, y: int, radius: float) -> np.ndarray:
    """The pixels whose centres lie within `radius` of pixel (x, y), clipped to the image, one per row.

    Read from a crop around the point: an array of the whole image would be another 3 bytes a pixel.
    """
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    reach = int(radius)
    top, left = max(0, y - reach), max(0, x - reach)
    window = np.asarray(im.crop((left, top, min(im.width, x + reach + 1), min(im.height, y + reach + 1))))
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
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    if not 1 <= len(points) <= MAX_POINTS:
        raise ToolInputError("points", f"{len(points)} points given; accepted: 1 to {MAX_POINTS}")
    radius = check_range(radius, 0, MAX_RADIUS, "radius")
    im = ctx.image(image)
    spots = [check_point(p, im.size, f"points[{i}]") for i, p in enumerate(points)]
    marks: list[Mark] = []
    samples, lines = [], []
    for i, (px, py) in enumerate(spots):
        x, y = min(int(px), im.width - 1), min(int(py), im.height - 1)
        values = disc(im, x, y, radius).astype(np.float64)
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
        marks += [ring_mark((x - ring - 1, y - ring - 1, x + ring + 1, y + ring + 1), (0, 0, 0, 255)),
                  ring_mark((x - ring, y - ring, x + ring, y + ring), (255, 255, 255, 255)),
                  label_mark((x + ring + 3, y - ring - 3), sample["label"], 14)]
    out = draw_marks(im, marks, "points")
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
    tolerance = int(check_range(tolerance, 0, 255, "tolerance"))
    out, matched = isolate(ctx.view(image), ink(color)[:3], tolerance, output == "keep")
    if out.mode == "L":  # only now: the input (a full copy when read back from disk) is gone before the result
        out = out.convert("RGB")
    total = out.width * out.height
    fraction = matched / total
    return ToolOutput(f"{color} +/-{tolerance} in {image}: {matched} of {total} pixels match "
                      f"({fraction:.2%})", out,
                      {"matched": matched, "total": total, "fraction": round(fraction, 6)})


def isolate(im: Image.Image, target: tuple[int, ...], tolerance: int, keep: bool) -> tuple[Image.Image, int]:
    """The white-on-black L mask of pixels whose R, G and B each lie within `tolerance` of `target` (or, to keep,
    the image with the others dimmed to DIM, rounded half up), and how many match.

    Pillow's per-channel tables and minimum, band by band: the int16 copies and comparisons numpy made cost
    about as much as the rest of a 12 MP call (bench/README.md).
    """
    inside = [[255 if abs(v - t) <= tolerance else 0 for v in range(256)] for t in target]
    dimmed = [math.floor(v * DIM + 0.5) for v in range(256)] * 3 + list(range(256)) * (len(im.mode) - 3)
    mask = Image.new("L", im.size)
    kept = Image.new(im.mode, im.size) if keep else None
    rows = max(1, LUMA_BLOCK // max(1, im.width))
    for top in range(0, im.height, rows):  # in bands: each step's whole-image copies of 50 MP would be GBs
        band = im.crop((0, top, im.width, min(im.height, top + rows)))
        red, green, blue = (band.getchannel(i).point(inside[i]) for i in range(3))
        matches = ImageChops.darker(ImageChops.darker(red, green), blue)  # 255 only where all three are
        mask.paste(matches, (0, top))
        if kept is not None:
            kept.paste(Image.composite(band, band.point(dimmed), matches), (0, top))
    matched = mask.histogram()[255]
    return (kept if kept is not None else mask), matched


TOOLS = [sample_color, isolate_color]
