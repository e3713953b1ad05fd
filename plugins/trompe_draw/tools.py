"""Core tools: draw reference marks, crop, compare regions side by side."""

from __future__ import annotations

from typing import Annotated

from PIL import Image
from pydantic import Field

from trompe_server import Box, ImageId, ToolContext, ToolOutput, check_box, check_range


def crop(ctx: ToolContext, image: ImageId, box: Box,
         zoom: Annotated[float, Field(description="enlargement factor, 1 to 8")] = 1.0) -> ToolOutput:
    """Cut out a box of an image, optionally enlarged, to inspect detail."""
    check_range(zoom, 1, 8, "zoom")
    im = ctx.image(image)
    x0, y0, x1, y1 = check_box(box, im.size)
    out = im.crop((x0, y0, x1, y1))
    if zoom != 1:
        out = out.resize((round(out.width * zoom), round(out.height * zoom)), Image.Resampling.NEAREST)
    return ToolOutput(f"crop [{x0}, {y0}, {x1}, {y1}] of {image}" + (f", zoom {zoom:g}" if zoom != 1 else ""), out)


TOOLS = [crop]
