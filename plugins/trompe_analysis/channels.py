"""Single channels (R, G, B, hue, saturation, value, luma) shown as greyscale, and Gaussian blur."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Literal

from PIL import Image, ImageFilter
from pydantic import Field
from trompe_draw.marks import LUMA_BLOCK, NUMPY_BLOCK, grey_image, luma
from trompe_server import ImageId, ToolContext, ToolOutput, check_range

if TYPE_CHECKING:  # for annotations: the functions that use numpy import it when called
    import numpy as np

MAX_BLUR = 200
# Rounds half up exactly: hue and saturation are 255 n / d with d <= 6 * 255, so a value that is not exactly
# k + 1/2 lies at least 1 / (2 d) > 3e-4 from it, while float64 put 34,212 colours' exact halves (of 2^24) a hair
# below and rounded them down a level (bench/README.md, "Issue 40's goals").
HALF_UP = 0.5 + 1e-6
CHANNELS = {"R": "red", "G": "green", "B": "blue", "H": "hue", "S": "saturation", "V": "value (max of R, G, B)",
            "L": "luma (BT.601)"}


def hsv_channel(rgb: np.ndarray, channel: str) -> np.ndarray:
    """Hue, saturation or value scaled to 0..255 (hue 0 = red, 85 = green, 170 = blue); only that one made, with
    exact integer steps up to the one division (the float64 planes of all three cost ~90 bytes a pixel)."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    r, g, b = (rgb[..., i].astype(np.int16) for i in range(3))
    high = np.maximum(np.maximum(r, g), b)
    if channel == "V":
        return high.astype(np.float64)
    spread = high - np.minimum(np.minimum(r, g), b)
    if channel == "S":
        return np.where(high == 0, 0, spread / np.where(high == 0, 1, high)) * 255
    red, green = high == r, high == g  # of equal maxima red decides first, then green
    difference = np.where(red, g - b, np.where(green, b - r, r - g))
    hue = np.where(red, 0, np.where(green, 2, 4)) + difference / np.where(spread == 0, 1, spread)
    return np.where(spread == 0, 0, (hue / 6) % 1) * 255


def channel_values(rgb: np.ndarray | Image.Image, channel: str) -> np.ndarray:
    """One channel of an RGB array or image as 0..255 integers.

    An image is worked out in bands of rows, as luma() does: the float64 copies hue needs would take about
    90 bytes a pixel over a whole 50 MP image.
    """
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    if isinstance(rgb, Image.Image):
        out = np.empty((rgb.height, rgb.width), dtype=np.uint8)
        rows = max(1, NUMPY_BLOCK // max(1, rgb.width))
        for top in range(0, rgb.height, rows):
            band = rgb.crop((0, top, rgb.width, min(rgb.height, top + rows)))
            out[top:top + rows] = channel_values(np.asarray(band)[..., :3], channel)
        return out
    if channel in "RGB":
        return rgb[..., "RGB".index(channel)].astype(np.uint8)
    if channel == "L":
        return luma(rgb)
    values = hsv_channel(rgb, channel)
    return np.clip(np.floor(values + HALF_UP), 0, 255).astype(np.uint8)


def extract_channel(ctx: ToolContext, image: ImageId,
                    channel: Annotated[Literal["R", "G", "B", "H", "S", "V", "L"],
                                       Field(description="R, G, B; H (hue), S (saturation), V (value); "
                                                         "L (luma 0.299 R + 0.587 G + 0.114 B)")]
                    ) -> ToolOutput:
    """Show one colour channel as a greyscale image, to separate colour from lightness or find hidden figures.

    Values are 0..255: white = high. Hue wraps around (0 and 255 are both red).
    """
    im = ctx.view(image)
    values = channel_values(im, channel)
    if im.mode != "RGBA":
        im = Image.new("RGB", (0, 0))  # only its mode matters now: free a large input before the result is made
    stats = {"channel": channel, "min": int(values.min()), "max": int(values.max()),
             "mean": round(float(values.mean()), 3)}
    return ToolOutput(f"{CHANNELS[channel]} channel of {image} (min {stats['min']}, max {stats['max']}, "
                      f"mean {stats['mean']:g})", grey_image(values, im), stats)


def blur(ctx: ToolContext, image: ImageId,
         radius: Annotated[float, Field(description=f"Gaussian radius (standard deviation) in pixels, "
                                                    f"0.5 to {MAX_BLUR}")] = 8) -> ToolOutput:
    """Gaussian-blur an image; a large radius hides fine detail and reveals large hidden shapes or words."""
    radius = check_range(radius, 0.5, MAX_BLUR, "radius")
    return ToolOutput(f"Gaussian blur radius {radius:g} of {image}", gaussian_blur(ctx.view(image), radius))


def gaussian_blur(im: Image.Image, radius: float) -> Image.Image:
    """Pillow's Gaussian blur (alpha premultiplied), pixel for pixel, worked out in bands of rows.

    Pillow's blur is three box passes across the rows, then three down the columns, each of radius at most
    radius + 1, rounded to 8 bits between (ImagingGaussianBlur), so blurring across then down gives the same
    pixels. Each row is blurred across once; each band is blurred down with that many rows of margin above and
    below, so it comes out exactly as in the whole image, and the filter's own buffers are only band-sized.
    """
    work = "RGBa" if im.mode == "RGBA" else im.mode
    margin = 3 * (math.ceil(radius) + 2)
    rows = max(margin, LUMA_BLOCK // max(1, im.width))
    if rows >= im.height:  # one band: Pillow's blur at once, which saves a pass between the directions
        return _in_mode(_in_mode(im, work).filter(ImageFilter.GaussianBlur(radius)), im.mode)
    across, down = ImageFilter.GaussianBlur((radius, 0)), ImageFilter.GaussianBlur((0, radius))
    out = Image.new(im.mode, im.size)
    tail = None  # the rows already blurred across that the next band's window starts with
    for top in range(0, im.height, rows):
        bottom = min(im.height, top + rows)
        first, last = max(0, top - margin), min(im.height, bottom + margin)  # the band and its margins
        start = first + (tail.height if tail is not None else 0)
        window = _in_mode(im.crop((0, start, im.width, last)), work).filter(across)
        if tail is not None:
            window = _stacked(tail, window)
        tail = window.crop((0, bottom - margin - first, im.width, last - first))
        band = window.filter(down).crop((0, top - first, im.width, bottom - first))
        del window  # no band-sized image of this band is held while the next one is made
        out.paste(_in_mode(band, im.mode), (0, top))
        del band
    return out


def _stacked(upper: Image.Image, lower: Image.Image) -> Image.Image:
    """`upper`'s rows, then `lower`'s, as one image."""
    both = Image.new(upper.mode, (upper.width, upper.height + lower.height))
    both.paste(upper, (0, 0))
    both.paste(lower, (0, upper.height))
    return both


def _in_mode(im: Image.Image, mode: str) -> Image.Image:
    """`im` converted to `mode`, or itself when it is in it already (Pillow's convert would copy it)."""
    return im if im.mode == mode else im.convert(mode)


TOOLS = [extract_channel, blur]
