"""Many marks on a tool's copy with exactly the pixels of one full-size layer composited over it, minus the layer.

Opaque marks that are not anti-aliased (1-pixel lines, ring outlines) are their ink wherever they land, so
they are drawn straight onto the copy. The other marks (text, see-through ink) are composited over their own
boxes only (merged into one band where their rows overlap, as a row of labels), each from a small layer on which
every mark that reaches the box is drawn again, in order, shifted by whole pixels: a 49 MP image no longer needs
a 196 MB layer and its blend for a few labels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw
from trompe_draw.marks import RGBA, label, label_box
from trompe_server import ToolInputError

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Mark:
    """One mark: how to draw it shifted left and up by (dx, dy) whole pixels, and where it can land."""

    draw: Callable[[ImageDraw.ImageDraw, int, int], None]
    bounds: tuple[float, float, float, float]  # a box the mark never leaves
    # Coordinates Pillow truncates toward zero or splits with math.modf (text origins, ellipse corners): a shift
    # keeps them on their side of 0, where shifting by whole pixels moves every pixel by exactly that much.
    anchors: tuple[float, ...] = ()
    direct: bool = False  # opaque and not anti-aliased: its pixels are its ink


def line_mark(start: tuple[int, int], end: tuple[int, int], rgba: RGBA) -> Mark:
    """A 1-pixel line between whole-pixel points."""
    def draw(pen: ImageDraw.ImageDraw, dx: int, dy: int) -> None:
        pen.line([(start[0] - dx, start[1] - dy), (end[0] - dx, end[1] - dy)], fill=rgba, width=1)

    return Mark(draw, (min(start[0], end[0]), min(start[1], end[1]), max(start[0], end[0]) + 1,
                       max(start[1], end[1]) + 1), direct=rgba[3] == 255)


def ring_mark(box: tuple[float, float, float, float], rgba: RGBA) -> Mark:
    """A 1-pixel ellipse outline in the box."""
    def draw(pen: ImageDraw.ImageDraw, dx: int, dy: int) -> None:
        pen.ellipse((box[0] - dx, box[1] - dy, box[2] - dx, box[3] - dy), outline=rgba, width=1)

    return Mark(draw, (box[0], box[1], box[2] + 1, box[3] + 1), anchors=box, direct=rgba[3] == 255)


def label_mark(xy: tuple[float, float], text: str, size: int, rgba: RGBA = (255, 255, 255, 255)) -> Mark:
    """trompe_draw's outlined label (anti-aliased, so always blended)."""
    def draw(pen: ImageDraw.ImageDraw, dx: int, dy: int) -> None:
        label(pen, (xy[0] - dx, xy[1] - dy), text, size, rgba)

    return Mark(draw, label_box(xy, text, size), anchors=xy)


def draw_marks(im: Image.Image, marks: Sequence[Mark], argument: str) -> Image.Image:
    """`im` (a tool's own copy) with the marks drawn in order; marks that all miss the image are an input error."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    boxes = [_clip(m.bounds, im.size) for m in marks]
    if all(box is None for box in boxes):
        raise ToolInputError(argument, f"the mark lies entirely outside the {im.width}x{im.height} image; "
                             f"accepted: shapes that touch 0..{im.width} x 0..{im.height}")
    blended = _bands([box for m, box in zip(marks, boxes) if box is not None and not m.direct])
    below = [im.crop(box) for box in blended]  # the pixels each blend starts from, before any mark
    known = np.array([box or (0, 0, 0, 0) for box in boxes])  # an empty box overlaps nothing
    canvas = ImageDraw.Draw(im)
    for m in marks:
        if m.direct:
            m.draw(canvas, 0, 0)
    for box, under in zip(blended, below):
        overlap = ((known[:, 0] < box[2]) & (box[0] < known[:, 2]) & (known[:, 1] < box[3]) & (box[1] < known[:, 3]))
        reaching = [marks[i] for i in np.flatnonzero(overlap)]  # in drawing order
        dx = min([box[0], *(math.floor(a) for m in reaching for a in m.anchors[0::2] if a >= 0)])
        dy = min([box[1], *(math.floor(a) for m in reaching for a in m.anchors[1::2] if a >= 0)])
        layer = Image.new("RGBA", (box[2] - dx, box[3] - dy), (0, 0, 0, 0))
        pen = ImageDraw.Draw(layer)
        for m in reaching:
            m.draw(pen, dx, dy)
        out = Image.alpha_composite(under.convert("RGBA"), layer.crop((box[0] - dx, box[1] - dy, *layer.size)))
        im.paste(out if im.mode == "RGBA" else out.convert(im.mode), box[:2])
    return im


def _bands(boxes: list[Box]) -> list[Box]:
    """The boxes merged where their rows overlap and what lies between them is less than what they cover: a row
    of close labels is blended from one layer, far-apart marks (or see-through lines) each from their own."""
    bands: list[Box] = []
    for box in sorted(boxes, key=lambda b: (b[1], b[0])):
        if bands:
            last = bands[-1]
            union = (min(last[0], box[0]), last[1], max(last[2], box[2]), max(last[3], box[3]))
            if box[1] < last[3] and _area(union) <= 2 * (_area(last) + _area(box)):
                bands[-1] = union
                continue
        bands.append(box)
    return bands


def _area(box: Box) -> int:
    return (box[2] - box[0]) * (box[3] - box[1])


def _clip(bounds: tuple[float, float, float, float], size: tuple[int, int]) -> Box | None:
    """Whole-pixel box of `bounds` (one pixel wider each way) within the image, or None when they miss it."""
    x0, y0 = max(0, math.floor(bounds[0]) - 1), max(0, math.floor(bounds[1]) - 1)
    x1, y1 = min(size[0], math.ceil(bounds[2]) + 1), min(size[1], math.ceil(bounds[3]) + 1)
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None
