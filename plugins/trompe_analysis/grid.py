"""A labelled grid over an image, so regions can be named (B3) and cropped by their cell box."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from trompe_draw.marks import ink
from trompe_server import Color, ImageId, ToolContext, ToolInputError, ToolOutput, check_range

from .marking import Mark, draw_marks, label_mark, line_mark

MIN_CELL = 4


def cell_edges(length: int, parts: int) -> list[int]:
    """Pixel edges splitting `length` into `parts` near-equal cells."""
    return [round(i * length / parts) for i in range(parts + 1)]


def overlay_grid(ctx: ToolContext, image: ImageId,
                 rows: Annotated[int, Field(description="number of rows, 1 to 50 (labelled 1, 2, ...)")] = 4,
                 cols: Annotated[int, Field(description="number of columns, 1 to 26 (labelled A, B, ...)")] = 4,
                 color: Color = "red") -> ToolOutput:
    """Draw a grid of 1-pixel lines with cells labelled A1, B1, ... (column letter, row number).

    Use it to count or group objects by cell, or to name a region; the result's data gives every
    cell's box [x0, y0, x1, y1] for crop.
    """
    im = ctx.image(image)
    rows, cols = int(check_range(rows, 1, 50, "rows")), int(check_range(cols, 1, 26, "cols"))
    for name, parts, length in (("rows", rows, im.height), ("cols", cols, im.width)):
        if length // parts < MIN_CELL:
            raise ToolInputError(name, f"{parts} cells over {length} pixels are under {MIN_CELL} pixels each; "
                                 f"accepted: 1 to {max(1, length // MIN_CELL)} for this image")
    rgba = ink(color)
    xs, ys = cell_edges(im.width, cols), cell_edges(im.height, rows)
    marks: list[Mark] = [line_mark((x, 0), (x, im.height - 1), rgba) for x in xs[1:-1]]
    marks += [line_mark((0, y), (im.width - 1, y), rgba) for y in ys[1:-1]]
    size = max(8, min(16, (xs[1] - xs[0]) // 3, (ys[1] - ys[0]) // 2))
    cells = {}
    for r in range(rows):
        for c in range(cols):
            name = f"{chr(65 + c)}{r + 1}"
            cells[name] = [xs[c], ys[r], xs[c + 1], ys[r + 1]]
            marks.append(label_mark((xs[c] + 2, ys[r] + 1), name, size, rgba))
    out = draw_marks(im, marks, "image")
    return ToolOutput(f"{rows}x{cols} grid on {image}, cells A1..{chr(64 + cols)}{rows}", out,
                      {"rows": rows, "cols": cols, "cells": cells})


TOOLS = [overlay_grid]
