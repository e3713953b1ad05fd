"""Single channels (R, G, B, hue, saturation, value, luma) shown as greyscale, and Gaussian blur."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from PIL import ImageFilter
from pydantic import Field
from trompe_draw.marks import grey_image, luma
from trompe_server import ImageId, ToolContext, ToolOutput, check_range

MAX_BLUR = 200
CHANNELS = {"R": "red", "G": "green", "B": "blue", "H": "hue", "S": "saturation", "V": "value (max of R, G, B)",
            "L": "luma (BT.601)"}


def hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hue, saturation and value scaled to 0..255 (hue 0 = red, 85 = green, 170 = blue)."""
    rgb = rgb.astype(np.float64)
    high, low = rgb.max(axis=-1), rgb.min(axis=-1)
    spread = high - low
    safe = np.where(spread == 0, 1, spread)
    r, g, b = (rgb[..., i] for i in range(3))
    hue = np.select([high == r, high == g], [(g - b) / safe, 2 + (b - r) / safe], 4 + (r - g) / safe)
    hue = np.where(spread == 0, 0, (hue / 6) % 1)
    sat = np.where(high == 0, 0, spread / np.where(high == 0, 1, high))
    return hue * 255, sat * 255, high


def channel_values(rgb: np.ndarray, channel: str) -> np.ndarray:
    """One channel of an RGB array as 0..255 integers."""
    if channel in "RGB":
        return rgb[..., "RGB".index(channel)].astype(np.uint8)
    if channel == "L":
        return luma(rgb)
    values = hsv(rgb)["HSV".index(channel)]
    return np.clip(np.floor(values + 0.5), 0, 255).astype(np.uint8)


def extract_channel(ctx: ToolContext, image: ImageId,
                    channel: Annotated[Literal["R", "G", "B", "H", "S", "V", "L"],
                                       Field(description="R, G, B; H (hue), S (saturation), V (value); "
                                                         "L (luma 0.299 R + 0.587 G + 0.114 B)")]
                    ) -> ToolOutput:
    """Show one colour channel as a greyscale image, to separate colour from lightness or find hidden figures.

    Values are 0..255: white = high. Hue wraps around (0 and 255 are both red).
    """
    im = ctx.image(image)
    values = channel_values(np.asarray(im)[..., :3], channel)
    stats = {"channel": channel, "min": int(values.min()), "max": int(values.max()),
             "mean": round(float(values.mean()), 3)}
    return ToolOutput(f"{CHANNELS[channel]} channel of {image} (min {stats['min']}, max {stats['max']}, "
                      f"mean {stats['mean']:g})", grey_image(values, im), stats)


def blur(ctx: ToolContext, image: ImageId,
         radius: Annotated[float, Field(description=f"Gaussian radius (standard deviation) in pixels, "
                                                    f"0.5 to {MAX_BLUR}")] = 8) -> ToolOutput:
    """Gaussian-blur an image; a large radius hides fine detail and reveals large hidden shapes or words."""
    radius = check_range(radius, 0.5, MAX_BLUR, "radius")
    im = ctx.image(image)
    soft = ImageFilter.GaussianBlur(radius)
    out = im.convert("RGBa").filter(soft).convert("RGBA") if im.mode == "RGBA" else im.filter(soft)
    return ToolOutput(f"Gaussian blur radius {radius:g} of {image}", out)


TOOLS = [extract_channel, blur]
