"""Whole-image operations: size, greyscale, one image laid over another."""

from __future__ import annotations

from typing import Annotated

from PIL import Image
from pydantic import Field
from trompe_server import Box, ImageId, ToolContext, ToolOutput, check_box, check_range

from .marks import grey_image, luma


def get_image_size(ctx: ToolContext, image: ImageId) -> ToolOutput:
    """Report an image's width and height in pixels (no new image), to place coordinates correctly."""
    im = ctx.view(image)
    return ToolOutput(f"{image}: {im.width}x{im.height} pixels ({im.mode})",
                      data={"width": im.width, "height": im.height, "mode": im.mode})


def convert_grayscale(ctx: ToolContext, image: ImageId) -> ToolOutput:
    """Convert to greyscale (ITU-R BT.601 luma), to judge lightness without colour getting in the way."""
    im = ctx.view(image)
    values = luma(im)
    if im.mode != "RGBA":
        im = Image.new("RGB", (0, 0))  # only its mode matters now: free a large input before the result is made
    return ToolOutput(f"greyscale (BT.601 luma) of {image}", grey_image(values, im))


def overlay_images(ctx: ToolContext, base: ImageId, overlay: ImageId, box: Box,
                   opacity: Annotated[float, Field(description="0 (invisible) to 1 (opaque)")] = 0.5
                   ) -> ToolOutput:
    """Lay one image over a box of another, see-through, to check whether two shapes or sizes match.

    The overlay is resized to the box (nearest-neighbour, so its colours stay exact) and blended as
    base * (1 - opacity) + overlay * opacity; the overlay's own transparency is respected.
    """
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    opacity = check_range(opacity, 0, 1, "opacity")
    below = ctx.view(base, "base")
    x0, y0, x1, y1 = check_box(box, below.size)
    above = ctx.view(overlay, "overlay").convert("RGBA")
    if above.size != (x1 - x0, y1 - y0):
        above = above.resize((x1 - x0, y1 - y0), Image.Resampling.NEAREST)
    top = np.asarray(above, dtype=np.float64)
    out = np.array(below)
    region = out[y0:y1, x0:x1, :3].astype(np.float64)
    alpha = opacity * top[..., 3:4] / 255
    out[y0:y1, x0:x1, :3] = np.floor(region * (1 - alpha) + top[..., :3] * alpha + 0.5).astype(np.uint8)
    return ToolOutput(f"{overlay} over [{x0}, {y0}, {x1}, {y1}] of {base} at opacity {opacity:g}",
                      Image.fromarray(out, below.mode))


TOOLS = [get_image_size, convert_grayscale, overlay_images]
