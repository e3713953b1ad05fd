"""Drawing helpers shared by the built-in tools: marks on a transparent layer, readable labels, luma."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from pydantic import Field
from trompe_server import ToolInputError, check_range, parse_color

MAX_WIDTH = 50
Width = Annotated[int, Field(description=f"stroke width in pixels, 1 to {MAX_WIDTH}")]
Fill = Annotated[str | None, Field(description="fill colour (name or hex, '#RRGGBBAA' for see-through); "
                                              "default: no fill")]


def ink(color: str, argument: str = "color") -> tuple[int, int, int, int]:
    """RGBA of a colour that leaves a visible mark (alpha above 0)."""
    rgba = parse_color(color, argument)
    if rgba[3] == 0:
        raise ToolInputError(argument, f"{color!r} is fully transparent and would draw nothing; "
                             "accepted: alpha 01 to FF")
    return rgba


def check_width(width: int) -> int:
    return int(check_range(width, 1, MAX_WIDTH, "width"))


def new_layer(im: Image.Image) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    """A transparent layer the size of `im`: marks are drawn there, then composited once."""
    layer = Image.new("RGBA", im.size, (0, 0, 0, 0))
    return layer, ImageDraw.Draw(layer)


def composite(im: Image.Image, layer: Image.Image, argument: str) -> Image.Image:
    """`im` with the layer on top (opaque marks replace pixels exactly); an empty layer is an input error."""
    if layer.getchannel("A").getbbox() is None:
        raise ToolInputError(argument, f"the mark lies entirely outside the {im.width}x{im.height} image; "
                             f"accepted: shapes that touch 0..{im.width} x 0..{im.height}")
    out = Image.alpha_composite(im.convert("RGBA"), layer)
    return out if im.mode == "RGBA" else out.convert("RGB")


@lru_cache(maxsize=32)
def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size)


def contrast(rgb: tuple[int, ...]) -> tuple[int, int, int, int]:
    """Black or white, whichever stands out against `rgb` (for text outlines)."""
    return (0, 0, 0, 255) if luma(np.array(rgb[:3], dtype=np.float64)) >= 128 else (255, 255, 255, 255)


def label(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int,
          color: tuple[int, ...] = (255, 255, 255, 255)) -> tuple[int, int, int, int]:
    """Text with an outline in the contrasting colour, readable on any background; returns its box."""
    stroke = max(1, size // 12)
    style = {"font": font(size), "stroke_width": stroke}
    draw.text(xy, text, fill=tuple(color), stroke_fill=contrast(color), **style)
    return tuple(round(v) for v in draw.textbbox(xy, text, **style))


def text_size(text: str, size: int) -> tuple[int, int]:
    """Width and height a label of this text takes, outline included."""
    _, _, x1, y1 = font(size).getbbox(text, stroke_width=max(1, size // 12))
    return x1, y1


def luma(rgb: np.ndarray) -> np.ndarray:
    """ITU-R BT.601 luma 0.299 R + 0.587 G + 0.114 B of the last axis, rounded half up to 0..255."""
    rgb = np.asarray(rgb, dtype=np.float64)
    y = rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114
    return np.clip(np.floor(y + 0.5), 0, 255).astype(np.uint8)


def grey_image(values: np.ndarray, like: Image.Image) -> Image.Image:
    """An 8-bit single-channel result shown as grey, keeping `like`'s transparency."""
    out = Image.fromarray(np.ascontiguousarray(values, dtype=np.uint8), "L")
    if like.mode == "RGBA":
        return Image.merge("RGBA", (out, out, out, like.getchannel("A")))
    return out.convert("RGB")
