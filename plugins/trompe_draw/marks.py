"""Drawing helpers shared by the built-in tools: marks painted on a copy, readable labels, luma."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated

from PIL import Image, ImageDraw, ImageFont
from pydantic import Field
from trompe_server import ToolInputError, check_range, parse_color

if TYPE_CHECKING:  # for annotations: the functions that use numpy import it when called
    import numpy as np

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
    """`im` with the layer on top (opaque marks replace pixels exactly); an empty layer is an input error.

    Drawn into `im` (a tool's own copy) band by band over the marks' bounding box: whole-image RGBA copies
    of a 50 MP image and their blend took 12 bytes a pixel more than the image and the layer.
    """
    box = layer.getchannel("A").getbbox()
    if box is None:
        raise ToolInputError(argument, f"the mark lies entirely outside the {im.width}x{im.height} image; "
                             f"accepted: shapes that touch 0..{im.width} x 0..{im.height}")
    x0, y0, x1, y1 = box
    rows = max(1, LUMA_BLOCK // max(1, x1 - x0))
    for top in range(y0, y1, rows):
        band = (x0, top, x1, min(y1, top + rows))
        im.paste(Image.alpha_composite(im.crop(band).convert("RGBA"), layer.crop(band)).convert(im.mode), band[:2])
    return im


Shape = Callable[[ImageDraw.ImageDraw], None]
"""Draws one mark in its own colours (at fixed coordinates: shifting float coordinates moves edge pixels)."""
Bounds = tuple[float, float, float, float]
RGBA = tuple[int, int, int, int]


def paint(im: Image.Image, shape: Shape, colours: Sequence[RGBA | None], bounds: Bounds, argument: str,
          touches: bool = False) -> Image.Image:
    """`im` with a mark: opaque colours straight onto it, see-through ones blended through a layer.

    `bounds` is a box the mark never leaves; `touches` says the caller knows a pixel of it lies inside the
    image, otherwise that is checked, and a mark entirely outside is an input error naming `argument`.
    """
    region = _clip(bounds, im.size)
    if region is None or not (touches or _inked(shape, region)):
        raise ToolInputError(argument, f"the mark lies entirely outside the {im.width}x{im.height} image; "
                             f"accepted: shapes that touch 0..{im.width} x 0..{im.height}")
    if all(c[3] == 255 for c in colours if c is not None):  # composited, an opaque mark is the mark itself
        shape(ImageDraw.Draw(im))
        return im
    layer = Image.new("RGBA", im.size, (0, 0, 0, 0))
    shape(ImageDraw.Draw(layer))
    blended = Image.alpha_composite(im.crop(region).convert("RGBA"), layer.crop(region))  # only where it can be
    im.paste(blended if im.mode == "RGBA" else blended.convert(im.mode), region[:2])
    return im


def _clip(bounds: Bounds, size: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """Whole-pixel box of `bounds` within the image, or None when they do not overlap."""
    x0, y0 = max(0, math.floor(bounds[0])), max(0, math.floor(bounds[1]))
    x1, y1 = min(size[0], math.ceil(bounds[2])), min(size[1], math.ceil(bounds[3]))
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def _inked(shape: Shape, region: tuple[int, int, int, int]) -> bool:
    """Whether the mark leaves a pixel inside `region`, drawn on a scratch layer reaching just its far corner."""
    scratch = Image.new("RGBA", region[2:], (0, 0, 0, 0))
    shape(ImageDraw.Draw(scratch))
    return scratch.getchannel("A").crop(region).getbbox() is not None


def well_inside(point: tuple[float, float], size: tuple[int, int], margin: float = 2) -> bool:
    """Whether a point lies far enough inside the image that a mark through it surely paints a pixel there."""
    return margin <= point[0] <= size[0] - 1 - margin and margin <= point[1] <= size[1] - 1 - margin


@lru_cache(maxsize=32)
def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size)


def contrast(rgb: tuple[int, ...]) -> tuple[int, int, int, int]:
    """Black or white, whichever stands out against `rgb` (for text outlines)."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    return (0, 0, 0, 255) if luma(np.array(rgb[:3], dtype=np.float64)) >= 128 else (255, 255, 255, 255)


def _label_style(size: int) -> dict:
    return {"font": font(size), "stroke_width": max(1, size // 12)}


def label(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int,
          color: tuple[int, ...] = (255, 255, 255, 255)) -> tuple[int, int, int, int]:
    """Text with an outline in the contrasting colour, readable on any background; returns its box."""
    draw.text(xy, text, fill=tuple(color), stroke_fill=contrast(color), **_label_style(size))
    return label_box(xy, text, size)


def label_box(xy: tuple[float, float], text: str, size: int) -> tuple[int, int, int, int]:
    """The box `label` would cover, outline included, without drawing anything."""
    return tuple(round(v) for v in _MEASURE.textbbox(xy, text, **_label_style(size)))


_MEASURE = ImageDraw.Draw(Image.new("L", (1, 1)))  # text boxes need a Draw object, not its pixels


def text_size(text: str, size: int) -> tuple[int, int]:
    """Width and height a label of this text takes, outline included."""
    _, _, x1, y1 = font(size).getbbox(text, stroke_width=max(1, size // 12))
    return x1, y1


LUMA_BLOCK = 1 << 20  # pixels Pillow converts at a time: whole-image copies of a 50 MP image would take GBs
NUMPY_BLOCK = 1 << 16  # pixels numpy works on at a time: each band's temporaries stay in cache and in the heap
# (float64 bands of 1M pixels were 8 MiB each, over the mmap threshold: 75,000 page faults for one 12 MP hue,
# at twice the CPU; bench/README.md)


def luma(rgb: np.ndarray | Image.Image) -> np.ndarray:
    """ITU-R BT.601 luma 0.299 R + 0.587 G + 0.114 B of the last axis, rounded half up to 0..255.

    Worked out in bands of rows: float64 copies of a whole 50 MP image would take GBs, and an image is read
    band by band too (np.asarray of all of it is another 150 MB).
    """
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    if isinstance(rgb, Image.Image):
        out = np.empty((rgb.height, rgb.width), dtype=np.uint8)
        rows = max(1, NUMPY_BLOCK // max(1, rgb.width))
        for top in range(0, rgb.height, rows):
            out[top:top + rows] = _luma(np.asarray(rgb.crop((0, top, rgb.width, min(rgb.height, top + rows)))))
        return out
    rgb = np.asarray(rgb)
    if rgb.ndim < 3:
        return _luma(rgb)
    out = np.empty(rgb.shape[:-1], dtype=np.uint8)
    rows = max(1, NUMPY_BLOCK // max(1, int(np.prod(rgb.shape[1:-1]))))
    for top in range(0, rgb.shape[0], rows):
        out[top:top + rows] = _luma(rgb[top:top + rows])
    return out


def _luma(rgb: np.ndarray) -> np.ndarray:
    """(299 R + 587 G + 114 B + 500) // 1000 in integers: the rounding the weights promise, exactly.

    Float64 arithmetic rounded 3,464 of the 16.7M colours, whose luma is exactly n + 0.5, down to n, and took
    7x the CPU; Pillow's convert("L") (16-bit fixed-point weights) differs in 9,040 (bench/README.md).
    """
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)
    rgb = np.asarray(rgb).astype(np.uint8, copy=False)
    y = np.multiply(rgb[..., 0], 299, dtype=np.uint32)
    y += np.multiply(rgb[..., 1], 587, dtype=np.uint32)
    y += np.multiply(rgb[..., 2], 114, dtype=np.uint32)
    y += 500
    y //= 1000
    return y.astype(np.uint8)


def grey_image(values: np.ndarray, like: Image.Image) -> Image.Image:
    """An 8-bit single-channel result shown as grey, keeping `like`'s transparency."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    out = Image.fromarray(np.ascontiguousarray(values, dtype=np.uint8), "L")
    if like.mode == "RGBA":
        return Image.merge("RGBA", (out, out, out, like.getchannel("A")))
    return out.convert("RGB")
