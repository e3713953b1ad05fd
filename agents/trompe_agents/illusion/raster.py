"""A report chart as a PNG: the chart's own SVG drawn with Pillow, so both files show the same axes, ticks,
labels, legend, lines, points and bars.

It reads only what plots.py writes (`svg`, `g`, `title`, `rect`, `line`, `polyline`, `circle`, and `text`,
optionally turned about its own anchor); any other element or transform is an error, never a silently missing
mark. The PNG is drawn at SCALE times the SVG's pixel size and says so in its resolution (96 dpi per SVG pixel),
so it prints at the SVG's size, sharp enough for a paper. Text is set in DejaVu Sans with its own bold face
(FACES), so a title reads as a typeset title; Pillow's built-in face only where DejaVu is not installed.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from functools import lru_cache

from PIL import Image, ImageColor, ImageDraw, ImageFont

SCALE = 2
SVG_DPI = 96  # CSS pixels per inch, which SVG user units are
ANCHORS = {"start": "l", "middle": "m", "end": "r"}
ROTATE = re.compile(r"rotate\((-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\)")
SKIPPED = {"title"}  # tooltips: not drawn
# an offset (dx, dy) on screen (y down) turned counter-clockwise by a quarter turn
QUARTERS = {0.0: lambda dx, dy: (dx, dy), 90.0: lambda dx, dy: (dy, -dx), 180.0: lambda dx, dy: (-dx, -dy),
            270.0: lambda dx, dy: (-dy, dx)}


# DejaVu Sans (Debian's and most distributions' default sans-serif) in its regular and bold faces, found by Pillow in
# the system's font folders. Not Liberation Sans 1.x: its embedded bitmaps draw small sizes in a serif-like strike.
FACES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")


@lru_cache(maxsize=32)
def _font(size: int, bold: bool = False) -> tuple[ImageFont.FreeTypeFont, bool]:
    """(a TrueType face at `size`, whether it is a bold face): DejaVu Sans where installed, else Pillow's own
    scalable face (Aileron Regular, which has no bold: the caller thickens it)."""
    try:
        return ImageFont.truetype(FACES[bold], size), bold
    except OSError:
        return ImageFont.load_default(size=size), False


def _colour(value: str | None, opacity: str | None = None) -> tuple[int, int, int] | None:
    """An SVG paint as RGB, an `opacity` mixed with the white the charts are drawn on; None for none."""
    if value in (None, "none"):
        return None
    red, green, blue = ImageColor.getrgb(value)[:3]
    alpha = float(opacity) if opacity is not None else 1.0
    return tuple(round(c * alpha + 255 * (1 - alpha)) for c in (red, green, blue))


def _num(element: ET.Element, name: str, default: float = 0.0) -> float:
    return float(element.get(name, default))


class _Painter:
    """Draws the SVG elements onto one image, in document order (later marks over earlier ones)."""

    def __init__(self, image: Image.Image, scale: int):
        self.image, self.scale, self.draw = image, scale, ImageDraw.Draw(image)

    def at(self, *values: float) -> list[float]:
        return [v * self.scale for v in values]

    def width(self, element: ET.Element) -> int:
        return max(1, round(_num(element, "stroke-width", 1.0) * self.scale))

    def paint(self, element: ET.Element) -> None:
        tag = element.tag.rsplit("}", 1)[-1]
        if tag in SKIPPED:
            return
        if tag in ("svg", "g"):
            for child in element:
                self.paint(child)
            return
        if element.get("transform") and tag != "text":
            raise ValueError(f"raster: a transform on <{tag}> is not drawn")
        getattr(self, f"_{tag}", self._unknown)(element)

    def _unknown(self, element: ET.Element) -> None:
        raise ValueError(f"raster: <{element.tag.rsplit('}', 1)[-1]}> is not an element the charts use")

    def _rect(self, e: ET.Element) -> None:
        x, y = _num(e, "x"), _num(e, "y")
        box = self.at(x, y, x + _num(e, "width"), y + _num(e, "height"))
        if box[2] > box[0] and box[3] > box[1]:
            self.draw.rectangle([box[0], box[1], box[2] - 1, box[3] - 1], fill=_colour(e.get("fill", "black"),
                                                                                       e.get("opacity")))

    def _line(self, e: ET.Element) -> None:
        self.draw.line(self.at(_num(e, "x1"), _num(e, "y1"), _num(e, "x2"), _num(e, "y2")),
                       fill=_colour(e.get("stroke"), e.get("opacity")), width=self.width(e))

    def _polyline(self, e: ET.Element) -> None:
        points = [float(v) for pair in e.get("points", "").split() for v in pair.split(",")]
        self.draw.line(self.at(*points), fill=_colour(e.get("stroke"), e.get("opacity")), width=self.width(e),
                       joint="curve")

    def _circle(self, e: ET.Element) -> None:
        cx, cy, r = _num(e, "cx"), _num(e, "cy"), _num(e, "r")
        self.draw.ellipse(self.at(cx - r, cy - r, cx + r, cy + r), fill=_colour(e.get("fill", "black"),
                                                                                e.get("opacity")))

    def _text(self, e: ET.Element) -> None:
        text = e.text or ""
        x, y = self.at(_num(e, "x"), _num(e, "y"))
        wants_bold = e.get("font-weight") == "bold"
        font, is_bold = _font(round(_num(e, "font-size", 12.0) * self.scale), wants_bold)
        anchor = ANCHORS[e.get("text-anchor", "start")] + "s"  # SVG's y is the baseline
        fill = _colour(e.get("fill", "black"))
        bold = self.scale if wants_bold and not is_bold else 0
        transform = e.get("transform")
        if not transform:
            self.draw.text((x, y), text, font=font, anchor=anchor, fill=fill, stroke_width=bold // 2,
                           stroke_fill=fill)
            return
        turn = ROTATE.fullmatch(transform.strip())
        if not turn or [float(v) for v in turn.groups()[1:]] != [_num(e, "x"), _num(e, "y")]:
            raise ValueError(f"raster: only a rotation about the text's own anchor is drawn, not {transform!r}")
        angle = -float(turn.group(1)) % 360  # Pillow turns counter-clockwise for positive angles, SVG clockwise
        if angle not in QUARTERS:
            raise ValueError(f"raster: only quarter turns are drawn, not {transform!r}")
        left, top, right, bottom = font.getbbox(text, anchor=anchor)
        label = Image.new("RGBA", (max(1, right - left), max(1, bottom - top)), (255, 255, 255, 0))
        ImageDraw.Draw(label).text((-left, -top), text, font=font, anchor=anchor, fill=fill)
        turned = label.rotate(angle, expand=True)
        # the anchor, from the label's centre, turned with it: the centres stay where they were
        dx, dy = QUARTERS[angle](-left - label.width / 2, -top - label.height / 2)
        corner = (round(x - turned.width / 2 - dx), round(y - turned.height / 2 - dy))
        self.image.paste(turned, corner, turned)


def svg_to_png(svg: str, scale: int = SCALE) -> bytes:
    """The chart's SVG (plots.py) drawn as PNG bytes, `scale` PNG pixels per SVG pixel."""
    root = ET.fromstring(svg)
    if root.tag.rsplit("}", 1)[-1] != "svg":
        raise ValueError("raster: not an <svg> chart")
    width, height = round(_num(root, "width")), round(_num(root, "height"))
    image = Image.new("RGB", (width * scale, height * scale), "white")
    _Painter(image, scale).paint(root)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", dpi=(SVG_DPI * scale, SVG_DPI * scale))
    return buffer.getvalue()
