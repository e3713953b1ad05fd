"""Drawing model results onto images: labelled boxes, numbered masks, a depth colormap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw, ImageFont

if TYPE_CHECKING:  # for annotations: the functions that use numpy import it when called
    import numpy as np

# Distinct, saturated colours that stay readable on photos; cycled by label or mark number.
PALETTE = [(230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48), (145, 30, 180),
           (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212), (0, 128, 128), (220, 190, 255),
           (170, 110, 40), (255, 250, 200), (128, 0, 0), (170, 255, 195), (128, 128, 0), (0, 0, 128)]
# Dark violet (far) through red and orange to pale yellow (near), like the usual depth renderings.
DEPTH_STOPS = ((0, 0, 4), (40, 11, 84), (101, 21, 110), (159, 42, 99), (212, 72, 66), (245, 125, 21),
               (250, 193, 39), (252, 255, 164))


def font(image_size: tuple[int, int]) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """A label font scaled to the image, so marks stay legible on small and large images."""
    return ImageFont.load_default(size=max(11, min(image_size) // 32))


def stroke(image_size: tuple[int, int]) -> int:
    return max(2, min(image_size) // 200)


def text_on_patch(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, color: tuple[int, int, int],
                  fnt, anchor: str = "lb") -> None:
    """Text on a filled patch of `color`, black or white whichever contrasts more."""
    x0, y0, x1, y1 = draw.textbbox(xy, text, font=fnt, anchor=anchor)
    draw.rectangle((x0 - 2, y0 - 2, x1 + 2, y1 + 2), fill=color)
    ink = (0, 0, 0) if sum(color) > 380 else (255, 255, 255)
    draw.text(xy, text, fill=ink, font=fnt, anchor=anchor)


def draw_boxes(image: Image.Image, boxes: Sequence[Sequence[float]], captions: Sequence[str],
               colors: Sequence[int]) -> Image.Image:
    """Boxes with a caption above each (inside the image), coloured by `colors` palette indices."""
    out = image.convert("RGB")
    draw = ImageDraw.Draw(out)
    fnt, width = font(out.size), stroke(out.size)
    for box, index in zip(boxes, colors, strict=True):
        draw.rectangle(tuple(box), outline=PALETTE[index % len(PALETTE)], width=width)
    for box, caption, index in zip(boxes, captions, colors, strict=True):
        top = box[1] if box[1] > fnt.size + 4 else box[1] + fnt.size + 4
        text_on_patch(draw, (box[0] + 2, top - 2), caption, PALETTE[index % len(PALETTE)], fnt)
    return out


def outline_of(mask: np.ndarray, width: int) -> np.ndarray:
    """Pixels of a mask within `width` of its border."""
    inner = mask.copy()
    for _ in range(width):
        inner = erode(inner)
    return mask & ~inner


def erode(mask: np.ndarray) -> np.ndarray:
    """One step of 4-neighbour erosion (pixels at the image edge count as border)."""
    out = mask.copy()
    out[1:, :] &= mask[:-1, :]
    out[:-1, :] &= mask[1:, :]
    out[:, 1:] &= mask[:, :-1]
    out[:, :-1] &= mask[:, 1:]
    out[0, :] = out[-1, :] = False
    out[:, 0] = out[:, -1] = False
    return out


def interior_point(mask: np.ndarray) -> tuple[int, int]:
    """A point well inside the mask, near its centre: where a number label belongs."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    core = mask
    for _ in range(64):
        thinner = erode(core)
        if not thinner.any():
            break
        core = thinner
    ys, xs = np.nonzero(core)
    cy, cx = ys.mean(), xs.mean()
    nearest = np.argmin((ys - cy) ** 2 + (xs - cx) ** 2)
    return int(xs[nearest]), int(ys[nearest])


def draw_marks(image: Image.Image, masks: Sequence[np.ndarray], label_at: Sequence[tuple[int, int]],
               mark: str) -> Image.Image:
    """Set-of-Mark overlay: translucent fills with numbers, outlines, or both; mark i is numbered i+1."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    base = np.asarray(image.convert("RGB"), dtype=np.float32)
    width = stroke(image.size)
    for index, mask in enumerate(masks):
        color = np.array(PALETTE[index % len(PALETTE)], dtype=np.float32)
        if mark in ("number", "both"):
            base[mask] = base[mask] * 0.55 + color * 0.45
        if mark in ("outline", "both"):
            base[outline_of(mask, width)] = color
    out = Image.fromarray(base.round().astype(np.uint8))
    if mark in ("number", "both"):
        draw, fnt = ImageDraw.Draw(out), font(out.size)
        for index, xy in enumerate(label_at):
            text_on_patch(draw, xy, str(index + 1), PALETTE[index % len(PALETTE)], fnt, anchor="mm")
    return out


def colorize(nearness: np.ndarray) -> Image.Image:
    """Values in [0, 1] (1 = nearest) as an RGB image along DEPTH_STOPS."""
    import numpy as np  # lazily: a stdio server lists its tools without numpy (bench/cold_start.py)

    positions = np.linspace(0, 1, len(DEPTH_STOPS))
    flat = np.clip(nearness, 0, 1).ravel()
    stops = np.array(DEPTH_STOPS, dtype=np.float64)
    rgb = np.stack([np.interp(flat, positions, stops[:, c]) for c in range(3)], axis=-1)
    return Image.fromarray(rgb.reshape(*nearness.shape, 3).round().astype(np.uint8))


def draw_points(image: Image.Image, points: Sequence[tuple[float, float]]) -> Image.Image:
    """Numbered ring markers at points, visible on any colormap."""
    draw, fnt = ImageDraw.Draw(image), font(image.size)
    radius = max(4, min(image.size) // 60)
    for index, (x, y) in enumerate(points):
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), outline=(255, 255, 255), width=3)
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), outline=(0, 0, 0), width=1)
        text_on_patch(draw, (x + radius + 2, y - radius), str(index + 1), (255, 255, 255), fnt)
    return image
