"""Regions: crop one (optionally enlarged) or lay several side by side at one common scale."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from PIL import Image, ImageDraw
from pydantic import BaseModel, Field
from trompe_server import (
    Box,
    ImageId,
    LimitError,
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_box,
    check_range,
)

from .marks import label, text_size

MAX_ZOOM = 8
FIT_SIDE = 512  # compare_crops' default scale enlarges the biggest region up to this many pixels
MAX_SCALE = 16
GAP = 8
LABEL_SIZE = 14
BACKGROUND = (128, 128, 128)  # neutral mid-grey between regions, so no colour biases the comparison


def _limit_pixels(ctx: ToolContext, width: int, height: int, argument: str, hint: str) -> None:
    """Refuse an output over max_pixels before allocating it."""
    if width * height > ctx.limits.max_pixels:
        raise LimitError(argument, f"the result would be {width}x{height} = {width * height} pixels, over the "
                         f"{ctx.limits.max_pixels} pixel limit (max_pixels); {hint}")


def crop(ctx: ToolContext, image: ImageId, box: Box,
         zoom: Annotated[float, Field(description=f"enlargement factor, 1 to {MAX_ZOOM}; each source pixel "
                                                  "becomes a zoom x zoom block (no smoothing)")] = 1.0
         ) -> ToolOutput:
    """Cut out a box of an image, optionally enlarged, to inspect detail; pixels are copied exactly."""
    check_range(zoom, 1, MAX_ZOOM, "zoom")
    x0, y0, x1, y1 = check_box(box, ctx.size(image))
    size = (round((x1 - x0) * zoom), round((y1 - y0) * zoom))
    most = math.floor(100 * math.sqrt(ctx.limits.max_pixels / ((x1 - x0) * (y1 - y0)))) / 100
    _limit_pixels(ctx, *size, "zoom", f"accepted for this box: zoom 1 to {min(most, MAX_ZOOM):g}")
    out = ctx.view(image).crop((x0, y0, x1, y1))  # the box alone is copied
    if zoom != 1:
        out = out.resize(size, Image.Resampling.NEAREST)
    return ToolOutput(f"crop [{x0}, {y0}, {x1}, {y1}] of {image}" + (f", zoom {zoom:g}" if zoom != 1 else ""), out)


class Region(BaseModel):
    """One region to compare: a box of an image of this session."""

    image: ImageId
    box: Box


def compare_crops(ctx: ToolContext,
                  crops: Annotated[list[Region], Field(description="2 to 6 regions {image, box}, from any "
                                                                   "images of the session")],
                  layout: Annotated[Literal["horizontal", "vertical", "grid"],
                                    Field(description="place regions in a row, a column or a grid")]
                  = "horizontal",
                  scale: Annotated[float | None, Field(description=f"output pixels per source pixel for every "
                                                                   f"region, 0.1 to {MAX_SCALE}; default: the "
                                                                   f"largest whole number (1 to {MAX_ZOOM}) that "
                                                                   f"keeps the biggest region within {FIT_SIDE} "
                                                                   "px")] = None,
                  ) -> ToolOutput:
    """Place regions side by side at one common scale, labelled A, B, C..., to compare size, shape or colour.

    Every region is scaled by the same factor (nearest-neighbour, so colours stay exact), so relative sizes
    are preserved. Regions sit on a neutral grey background; each label names the region's image and box.
    """
    most = ctx.limits.max_inputs
    if not 2 <= len(crops) <= most:
        raise ToolInputError("crops", f"{len(crops)} regions given; accepted: 2 to {most}")
    boxes = [check_box(r.box, ctx.size(r.image, f"crops[{i}].image"), f"crops[{i}].box")
             for i, r in enumerate(crops)]
    longest = max(max(x1 - x0, y1 - y0) for x0, y0, x1, y1 in boxes)
    if scale is None:
        scale = float(min(MAX_ZOOM, max(1, FIT_SIDE // longest)))
    check_range(scale, 0.1, MAX_SCALE, "scale")

    names = [f"{chr(65 + i)}: {r.image} [{', '.join(map(str, b))}]" for i, (r, b) in enumerate(zip(crops, boxes))]
    sizes = [(max(1, round((x1 - x0) * scale)), max(1, round((y1 - y0) * scale))) for x0, y0, x1, y1 in boxes]
    label_h = text_size("Ag", LABEL_SIZE)[1] + 4
    cells = [(max(w, text_size(n, LABEL_SIZE)[0]), label_h + h) for n, (w, h) in zip(names, sizes)]
    cols = {"horizontal": len(crops), "vertical": 1, "grid": math.ceil(math.sqrt(len(crops)))}[layout]
    col_w = [max(c[0] for c in cells[i::cols]) for i in range(cols)]
    row_h = [max(c[1] for c in cells[i:i + cols]) for i in range(0, len(cells), cols)]
    width = sum(col_w) + GAP * (len(col_w) + 1)
    height = sum(row_h) + GAP * (len(row_h) + 1)
    _limit_pixels(ctx, width, height, "scale", "use a smaller scale or smaller boxes")

    sources = [ctx.view(r.image, f"crops[{i}].image") for i, r in enumerate(crops)]
    mode = "RGBA" if any(s.mode == "RGBA" for s in sources) else "RGB"
    canvas = Image.new(mode, (width, height), BACKGROUND)
    draw = ImageDraw.Draw(canvas)
    panels = []
    for i, (src, box, name, size) in enumerate(zip(sources, boxes, names, sizes)):
        row, col = divmod(i, cols)
        x = GAP * (col + 1) + sum(col_w[:col])
        y = GAP * (row + 1) + sum(row_h[:row])
        label(draw, (x, y), name, LABEL_SIZE)
        region = src.crop(box).convert(mode)
        if region.size != size:
            region = region.resize(size, Image.Resampling.NEAREST)
        canvas.paste(region, (x, y + label_h))
        panels.append({"label": chr(65 + i), "image": crops[i].image, "box": list(box),
                       "at": [x, y + label_h, x + size[0], y + label_h + size[1]]})
    summary = f"{len(crops)} regions {layout}, scale {scale:g}: " + "; ".join(names)
    return ToolOutput(summary, canvas, {"scale": scale, "layout": layout, "panels": panels})


TOOLS = [crop, compare_crops]
