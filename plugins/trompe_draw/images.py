"""Whole-image operations: size, greyscale, one image laid over another."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from PIL import Image
from pydantic import Field
from trompe_server import Box, ImageId, ToolContext, ToolOutput, check_box, check_range

from .marks import NUMPY_BLOCK, grey_image, luma

if TYPE_CHECKING:  # for annotations: the functions that use numpy import it when called
    import numpy as np


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
    out = below.copy()  # Pillow's copy: only the box changes (a numpy copy and back was two more full copies)
    region = np.array(below.crop((x0, y0, x1, y1)))
    blend(region, np.asarray(above), opacity)
    out.paste(Image.fromarray(region, below.mode), (x0, y0))
    return ToolOutput(f"{overlay} over [{x0}, {y0}, {x1}, {y1}] of {base} at opacity {opacity:g}", out)


def blend(region: np.ndarray, top: np.ndarray, opacity: float) -> None:
    """region[..., :3] = floor(region * (1 - a) + top * a + 0.5) with a = opacity * top's alpha / 255, in place.

    An overlay of one alpha (any opaque one) has one `a`: every pixel is then read from a 256 x 256 table of
    that same float64 formula (exactly its values, at a fraction of the CPU and none of its float64 copies);
    otherwise the formula runs on bands of rows, whose float64 copies stay small.
    """
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    alpha = top[..., 3]
    rows = max(1, NUMPY_BLOCK // max(1, region.shape[1]))
    if alpha.size and alpha.min() == alpha.max():
        a = opacity * float(alpha.flat[0]) / 255
        levels = np.arange(256, dtype=np.float64)
        table = np.floor(levels[:, None] * (1 - a) + levels[None, :] * a + 0.5).astype(np.uint8).ravel()
        for start in range(0, region.shape[0], rows):
            band, over = region[start:start + rows, :, :3], top[start:start + rows, :, :3]
            index = band.astype(np.uint16) << 8
            index |= over
            np.take(table, index, out=band)
        return
    for start in range(0, region.shape[0], rows):
        band, over = region[start:start + rows], top[start:start + rows].astype(np.float64)
        a = opacity * over[..., 3:4] / 255
        band[..., :3] = np.floor(band[..., :3] * (1 - a) + over[..., :3] * a + 0.5).astype(np.uint8)


TOOLS = [get_image_size, convert_grayscale, overlay_images]
