"""A float canvas that composites supersampled shapes, so edges are antialiased but flat areas keep exact values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

Point = tuple[float, float]
Colour = tuple[int, int, int]

SUPERSAMPLE = 4


@dataclass(frozen=True)
class Polygon:
    points: Sequence[Point]

    def bbox(self) -> tuple[float, float, float, float]:
        xs, ys = zip(*self.points)
        return min(xs), min(ys), max(xs), max(ys)

    def draw(self, draw: ImageDraw.ImageDraw, to_mask) -> None:
        draw.polygon([to_mask(p) for p in self.points], fill=255)


@dataclass(frozen=True)
class Disc:
    centre: Point
    radius: float
    hole: float = 0.0  # inner radius of a ring; 0 for a full disc

    def bbox(self) -> tuple[float, float, float, float]:
        (x, y), r = self.centre, self.radius
        return x - r, y - r, x + r, y + r

    def draw(self, draw: ImageDraw.ImageDraw, to_mask) -> None:
        for radius, fill in ((self.radius, 255), (self.hole, 0)):
            if radius > 0:
                (x0, y0), (x1, y1) = to_mask((self.centre[0] - radius, self.centre[1] - radius)), to_mask(
                    (self.centre[0] + radius, self.centre[1] + radius))
                draw.ellipse((x0, y0, x1, y1), fill=fill)


Shape = Polygon | Disc


class Canvas:
    """An RGB picture in float; shapes are painted with their exact colour weighted by pixel coverage."""

    def __init__(self, width: int, height: int, background: Colour = (255, 255, 255)):
        self.width, self.height = width, height
        self.pixels = np.empty((height, width, 3), dtype=np.float32)
        self.pixels[:] = background

    def paint(self, colour: Colour, shapes: Sequence[Shape]) -> None:
        """Composite the union of `shapes` in `colour`; coverage comes from a SUPERSAMPLE² grid per pixel."""
        if not shapes:
            return
        boxes = np.array([s.bbox() for s in shapes])
        x0 = max(0, math.floor(boxes[:, 0].min()) - 1)
        y0 = max(0, math.floor(boxes[:, 1].min()) - 1)
        x1 = min(self.width, math.ceil(boxes[:, 2].max()) + 1)
        y1 = min(self.height, math.ceil(boxes[:, 3].max()) + 1)
        if x1 <= x0 or y1 <= y0:
            return
        s = SUPERSAMPLE
        mask = Image.new("L", ((x1 - x0) * s, (y1 - y0) * s), 0)
        draw = ImageDraw.Draw(mask)

        def to_mask(p: Point) -> Point:
            # a subpixel is filled when its centre lies inside the shape
            return (p[0] - x0) * s - 0.5, (p[1] - y0) * s - 0.5

        for shape in shapes:
            shape.draw(draw, to_mask)
        # box-average each SUPERSAMPLE² block; a fully covered pixel stays exactly 255, i.e. exactly `colour`
        self.blend(np.asarray(mask.reduce(s), dtype=np.float32) / 255.0, colour, (x0, y0))

    def blend(self, cover: np.ndarray, colour: Colour, origin: tuple[int, int] = (0, 0)) -> None:
        """Mix `colour` into the picture with per-pixel weights in [0, 1] placed at `origin`."""
        x0, y0 = origin
        region = self.pixels[y0:y0 + cover.shape[0], x0:x0 + cover.shape[1]]
        paint = np.asarray(colour, dtype=np.float32)
        region[cover >= 1.0] = paint
        edge = (cover > 0) & (cover < 1.0)
        a = cover[edge][:, None]
        region[edge] = region[edge] * (1 - a) + paint * a

    def text(self, xy: Point, label: str, size: float, colour: Colour = (0, 0, 0)) -> None:
        """Draw a centred label (for marker names); Pillow's built-in font, antialiased by FreeType."""
        font = ImageFont.load_default(size=max(8.0, size))
        mask = Image.new("L", (self.width, self.height), 0)
        ImageDraw.Draw(mask).text(xy, label, fill=255, font=font, anchor="mm")
        self.blend(np.asarray(mask, dtype=np.float32) / 255.0, colour)

    def image(self) -> Image.Image:
        return Image.fromarray(np.rint(self.pixels).astype(np.uint8), "RGB")  # values stay within 0..255


def stroke(points: Sequence[Point], width: float) -> Polygon:
    """Outline of a polyline of constant `width` (butt ends), so thick curves and lines fill as one polygon."""
    pts = np.asarray(points, dtype=np.float64)
    tangents = np.gradient(pts, axis=0)
    tangents /= np.linalg.norm(tangents, axis=1, keepdims=True)
    normals = np.stack([-tangents[:, 1], tangents[:, 0]], axis=1) * (width / 2.0)
    left, right = pts + normals, pts - normals
    outline = np.concatenate([left, right[::-1]])
    return Polygon([(float(x), float(y)) for x, y in outline])


def segment(p: Point, q: Point, width: float) -> Polygon:
    """A straight bar from p to q."""
    return stroke([p, q], width)


def bowed(p: Point, q: Point, sagitta: float, n: int = 48) -> list[Point]:
    """Points on a parabolic arc from p to q whose middle sits `sagitta` px off the chord, along (-dy, dx)."""
    (px, py), (qx, qy) = p, q
    length = math.hypot(qx - px, qy - py)
    nx, ny = -(qy - py) / length, (qx - px) / length
    out = []
    for t in np.linspace(0.0, 1.0, n):
        bulge = 4.0 * sagitta * t * (1.0 - t)
        out.append((px + (qx - px) * t + nx * bulge, py + (qy - py) * t + ny * bulge))
    return out


def regular_polygon(centre: Point, radius: float, sides: int, rotation: float = -math.pi / 2) -> Polygon:
    """A regular polygon with circumradius `radius`; the first vertex points up by default."""
    cx, cy = centre
    return Polygon([(cx + radius * math.cos(rotation + 2 * math.pi * k / sides),
                     cy + radius * math.sin(rotation + 2 * math.pi * k / sides)) for k in range(sides)])
