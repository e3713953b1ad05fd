"""A float canvas that composites supersampled shapes, so edges are antialiased but flat areas keep exact values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

Point = tuple[float, float]
Colour = tuple[int, int, int]

SUPERSAMPLE = 4  # polygons: a SUPERSAMPLE² grid per pixel
EDGE = 8  # discs: an EDGE² grid on pixels their rim crosses


@dataclass(frozen=True)
class Polygon:
    points: Sequence[Point]

    def bbox(self) -> tuple[float, float, float, float]:
        xs, ys = zip(*self.points)
        return min(xs), min(ys), max(xs), max(ys)


@dataclass(frozen=True)
class Disc:
    """A disc, or a ring when `hole` > 0, with coverage computed from the exact radius (no raster rounding)."""

    centre: Point
    radius: float
    hole: float = 0.0  # inner radius of a ring; 0 for a full disc

    def bbox(self) -> tuple[float, float, float, float]:
        (x, y), r = self.centre, self.radius
        return x - r, y - r, x + r, y + r

    def coverage(self, x0: int, y0: int, width: int, height: int) -> np.ndarray:
        """Share of each pixel of the box at (x0, y0) inside the shape; edge pixels sampled on an EDGE² grid."""
        xs = np.arange(x0, x0 + width, dtype=np.float64) + 0.5 - self.centre[0]
        ys = np.arange(y0, y0 + height, dtype=np.float64) + 0.5 - self.centre[1]
        sq = xs[None, :] ** 2 + ys[:, None] ** 2  # squared distance of each pixel centre
        cover = ((sq < self.radius ** 2) & (sq >= self.hole ** 2)).astype(np.float32)
        near = np.zeros(sq.shape, dtype=bool)
        for rim in (self.radius, self.hole):
            if rim > 0:
                near |= (sq > max(0.0, rim - 0.75) ** 2) & (sq < (rim + 0.75) ** 2)
        iy, ix = np.nonzero(near)
        offsets = (np.arange(EDGE) + 0.5) / EDGE - 0.5
        sx = xs[ix][:, None, None] + offsets[None, None, :]
        sy = ys[iy][:, None, None] + offsets[None, :, None]
        sub = sx * sx + sy * sy
        cover[iy, ix] = ((sub < self.radius ** 2) & (sub >= self.hole ** 2)).mean(axis=(1, 2))
        return cover


Shape = Polygon | Disc


class Canvas:
    """An RGB picture in float; shapes are painted with their exact colour weighted by pixel coverage."""

    def __init__(self, width: int, height: int, background: Colour = (255, 255, 255)):
        self.width, self.height = width, height
        self.pixels = np.empty((height, width, 3), dtype=np.float32)
        self.pixels[:] = background

    def paint(self, colour: Colour, shapes: Sequence[Shape]) -> None:
        """Composite the union of `shapes` in `colour`, each pixel weighted by how much of it they cover."""
        if not shapes:
            return
        boxes = np.array([s.bbox() for s in shapes])
        x0, y0, x1, y1 = self.pixel_box((boxes[:, 0].min(), boxes[:, 1].min(), boxes[:, 2].max(), boxes[:, 3].max()))
        if x1 <= x0 or y1 <= y0:
            return
        polygons = [shape for shape in shapes if isinstance(shape, Polygon)]
        cover = np.zeros((y1 - y0, x1 - x0), dtype=np.float32)
        if polygons:
            s = SUPERSAMPLE
            mask = Image.new("L", ((x1 - x0) * s, (y1 - y0) * s), 0)
            draw = ImageDraw.Draw(mask)
            for polygon in polygons:
                # a subpixel is filled when its centre lies inside the polygon
                draw.polygon([((x - x0) * s - 0.5, (y - y0) * s - 0.5) for x, y in polygon.points], fill=255)
            # box-average each block; a fully covered pixel stays exactly 255, i.e. exactly `colour`
            cover = np.asarray(mask.reduce(s), dtype=np.float32) / 255.0
        for disc in shapes:
            if isinstance(disc, Disc):  # shapes of one colour are expected not to share edge pixels
                dx0, dy0, dx1, dy1 = self.pixel_box(disc.bbox())
                if dx1 > dx0 and dy1 > dy0:
                    part = cover[dy0 - y0:dy1 - y0, dx0 - x0:dx1 - x0]
                    np.maximum(part, disc.coverage(dx0, dy0, dx1 - dx0, dy1 - dy0), out=part)
        self.blend(cover, colour, (x0, y0))

    def pixel_box(self, bbox: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        """Whole pixels around a shape's bounding box, with a one-pixel margin, clipped to the picture."""
        return (max(0, math.floor(bbox[0]) - 1), max(0, math.floor(bbox[1]) - 1),
                min(self.width, math.ceil(bbox[2]) + 1), min(self.height, math.ceil(bbox[3]) + 1))

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
