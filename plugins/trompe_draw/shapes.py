"""Reference marks drawn on a copy of an image: lines, rectangles, circles, text."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import Field
from trompe_server import (
    Box,
    Color,
    ImageId,
    Point,
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_box,
    check_point,
    check_range,
)

from .marks import Fill, Width, check_width, ink, label, label_box, paint, well_inside

LineEnd = Annotated[list[float], Field(min_length=2, max_length=2,
                                       description="[x, y] in pixels; may lie outside the image (clipped)")]
MAX_TEXT = 200


def _fill(fill: str | None):
    return None if fill is None else ink(fill, "fill")


def draw_line(ctx: ToolContext, image: ImageId, start: LineEnd, end: LineEnd, color: Color = "red",
              width: Width = 2) -> ToolOutput:
    """Draw a straight line, e.g. a reference to judge whether an edge is straight, parallel or aligned.

    The line is exact (no anti-aliasing) and joins the pixels the two ends lie in. Ends may lie outside the
    image by up to the image's size (the line is clipped), so a reference can cross the whole picture;
    the line must touch the image.
    """
    im = ctx.image(image)
    reach = max(im.size)
    x0, y0 = check_point(start, im.size, "start", margin=reach)
    x1, y1 = check_point(end, im.size, "end", margin=reach)
    rgba, width = ink(color), check_width(width)
    if (x0, y0) == (x1, y1):
        raise ToolInputError("end", f"{list(end)} equals start; accepted: a point different from start")

    # the pixel each end lies in: Pillow truncates toward zero, which put an end at x = -0.9 in column 0
    (a, b), (c, d) = ends = [(math.floor(x0), math.floor(y0)), (math.floor(x1), math.floor(y1))]

    def shape(draw):
        draw.line(ends, fill=rgba, width=width)

    bounds = (min(a, c) - width, min(b, d) - width, max(a, c) + width + 1, max(b, d) + width + 1)
    out = paint(im, shape, [rgba], bounds, "start/end",
                touches=any(well_inside(p, im.size) for p in ((a, b), ((a + c) / 2, (b + d) / 2), (c, d))))
    return ToolOutput(f"line ({x0:g}, {y0:g})-({x1:g}, {y1:g}) {color} width {width} on {image}", out)


def draw_rectangle(ctx: ToolContext, image: ImageId, box: Box, color: Color = "red", width: Width = 2,
                   fill: Fill = None) -> ToolOutput:
    """Outline (and optionally fill) a box, to mark a region or frame one for later comparison.

    The outline lies inside the box, so the same box passed to crop contains it.
    """
    im = ctx.image(image)
    x0, y0, x1, y1 = check_box(box, im.size)
    rgba, width, fill_rgba = ink(color), check_width(width), _fill(fill)

    def shape(draw):
        if min(x1 - x0, y1 - y0) <= 2 * width:  # the outline covers the box; Pillow's would spill past it
            draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=rgba)
        else:
            draw.rectangle((x0, y0, x1 - 1, y1 - 1), outline=rgba, width=width, fill=fill_rgba)

    out = paint(im, shape, [rgba, fill_rgba], (x0, y0, x1, y1), "box", touches=True)  # check_box: inside
    filled = f", filled {fill}" if fill else ""
    return ToolOutput(f"rectangle [{x0}, {y0}, {x1}, {y1}] {color} width {width}{filled} on {image}", out)


def draw_circle(ctx: ToolContext, image: ImageId, center: Point,
                radius: Annotated[float, Field(description="radius in pixels, 1 to the image's longer side")],
                color: Color = "red", width: Width = 2, fill: Fill = None) -> ToolOutput:
    """Draw a circle around a point, to mark a feature or compare apparent sizes.

    The outline lies inside the radius; the centre must lie within the image.
    """
    im = ctx.image(image)
    cx, cy = check_point(center, im.size, "center")
    radius = check_range(radius, 1, max(im.size), "radius")
    rgba, width, fill_rgba = ink(color), check_width(width), _fill(fill)

    def shape(draw):
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), outline=rgba, width=width, fill=fill_rgba)

    ring = radius - width / 2  # the middle of the outline, which lies inside the radius
    on_ring = ((cx - ring, cy), (cx + ring, cy), (cx, cy - ring), (cx, cy + ring))
    reach = radius + width + 2
    bounds = (cx - reach, cy - reach, cx + reach, cy + reach)
    out = paint(im, shape, [rgba, fill_rgba], bounds, "center",
                touches=fill_rgba is not None or any(well_inside(p, im.size) for p in on_ring))
    filled = f", filled {fill}" if fill else ""
    return ToolOutput(f"circle at ({cx:g}, {cy:g}) radius {radius:g} {color} width {width}{filled} on {image}",
                      out)


def draw_text(ctx: ToolContext, image: ImageId,
              position: Annotated[Point, Field(description="[x, y] of the text's top-left corner, in pixels")],
              text: Annotated[str, Field(description=f"the text, 1 to {MAX_TEXT} characters; '\\n' breaks lines")],
              color: Color = "red",
              size: Annotated[int, Field(description="text height in pixels, 8 to 200")] = 16) -> ToolOutput:
    """Write a short label on the image, e.g. to name marked regions; it gets a contrasting outline."""
    im = ctx.image(image)
    x, y = check_point(position, im.size, "position")
    if not 1 <= len(text) <= MAX_TEXT or not text.strip():
        raise ToolInputError("text", f"has {len(text)} characters; accepted: 1 to {MAX_TEXT}, not only spaces")
    rgba, size = ink(color), int(check_range(size, 8, 200, "size"))
    bbox = label_box((x, y), text, size)
    out = paint(im, lambda draw: label(draw, (x, y), text, size, rgba), [rgba], bbox, "position")
    return ToolOutput(f"text {text!r} at ({x:g}, {y:g}) {color} size {size} on {image}", out,
                      {"text_box": list(bbox)})


TOOLS = [draw_line, draw_rectangle, draw_circle, draw_text]
