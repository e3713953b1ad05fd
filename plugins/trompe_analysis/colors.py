"""Exact colour readings at points, and masks of where a colour occurs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from PIL import Image
from pydantic import Field
from trompe_draw.marks import NUMPY_BLOCK, ink
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
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    target = np.array(ink(color)[:3], dtype=np.int16)
    tolerance = int(check_range(tolerance, 0, 255, "tolerance"))
    im = ctx.view(image)
    match = np.empty((im.height, im.width), dtype=bool)
    kept = Image.new(im.mode, im.size) if output == "keep" else None
    rows = max(1, NUMPY_BLOCK // max(1, im.width))
    for top in range(0, im.height, rows):  # in bands: int16 copies of a whole 50 MP image would take GBs
        pixels = np.asarray(im.crop((0, top, im.width, min(im.height, top + rows))))
        band = match[top:top + rows]
        band[:] = (np.abs(pixels[..., :3].astype(np.int16) - target) <= tolerance).all(axis=-1)
        if kept is not None:
            dimmed = pixels.copy()
            dimmed[~band, :3] = np.floor(dimmed[~band, :3] * DIM + 0.5).astype(np.uint8)
            kept.paste(Image.fromarray(dimmed, im.mode), (0, top))
    del im  # not needed any more: the input goes before the result is made
    out = kept if kept is not None else Image.fromarray(match.view(np.uint8) * np.uint8(255), "L").convert("RGB")
    fraction = float(match.mean())
    return ToolOutput(f"{color} +/-{tolerance} in {image}: {int(match.sum())} of {match.size} pixels match "
                      f"({fraction:.2%})", out,
                      {"matched": int(match.sum()), "total": int(match.size), "fraction": round(fraction, 6)})


TOOLS = [sample_color, isolate_color]
