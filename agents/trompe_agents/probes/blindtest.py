"""BlindTest-style probes: simple 2D drawings whose answer is computed from the geometry that was drawn.

The tasks follow "Vision Language Models Are Blind" (BlindTest) and the task names SEVEX reports. Each
generator first picks the answer uniformly (so answers are balanced), then draws random geometry that has
exactly that answer, and keeps only drawings with clear margins (no near-touches a renderer could blur).
`counterfactual` and `magnitude` do not apply to these tasks: they are recorded as False / 0.
"""

from __future__ import annotations

import string
from collections.abc import Callable

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .base import Probe, family

SUITE = "blindtest"
WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
BLUE = (0, 0, 255)
RED = (255, 0, 0)
# Distinct, saturated colours for subway lines and circle pairs (none is black, white, grey or red).
PALETTE = [(0, 160, 0), (0, 90, 255), (255, 140, 0), (150, 0, 200), (0, 190, 190), (200, 0, 120),
           (120, 80, 0), (90, 200, 0)]
COUNT_HINT = "Answer with a number in curly brackets, e.g., {3}."


def _canvas(size: int) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    im = Image.new("RGB", (size, size), WHITE)
    return im, ImageDraw.Draw(im)


def _width(size: int, per: float = 160) -> int:
    """Stroke width that stays visible at any image size."""
    return max(2, round(size / per))


def _until(rng: np.random.Generator, draw: Callable[[], dict | None], what: str, tries: int = 2000) -> dict:
    """Redraw random geometry until it meets the margins; fail loudly instead of looping forever."""
    for _ in range(tries):
        found = draw()
        if found is not None:
            return found
    raise ValueError(f"could not draw a clear {what} probe; try a larger size")


def _probe(im: Image.Image, question: str, answer: str, name: str, category: str, params: dict) -> Probe:
    return Probe(image=im, question=question, answer=answer, family=name, category=category,
                 magnitude=0.0, counterfactual=False, params=params)


# ---------------------------------------------------------------- line intersections

def crossings(ys_a: list[float], ys_b: list[float]) -> list[float]:
    """x positions (0..1) where two piecewise-linear functions on equally spaced knots cross."""
    xs = np.linspace(0, 1, len(ys_a))
    d = np.asarray(ys_a) - np.asarray(ys_b)
    found = []
    for i in range(len(d) - 1):
        if d[i] * d[i + 1] < 0:
            found.append(float(xs[i] + (xs[i + 1] - xs[i]) * d[i] / (d[i] - d[i + 1])))
    return found


@family("line_intersections", SUITE, "LineIntersections",
        "Two piecewise-linear plots (blue, red); how many times do they cross (0, 1 or 2)?")
def line_intersections(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    target = int(rng.integers(0, 3))
    margin = 0.2  # the plots are at least this far apart (in plot heights) at every knot

    def attempt() -> dict | None:
        a, b = rng.uniform(0, 1, 3).round(3), rng.uniform(0, 1, 3).round(3)
        if np.min(np.abs(a - b)) < margin or len(crossings(list(a), list(b))) != target:
            return None
        return {"blue": [float(v) for v in a], "red": [float(v) for v in b]}

    params = _until(rng, attempt, "line_intersections")
    params["crossings"] = crossings(params["blue"], params["red"])
    im, draw = _canvas(size)
    lo, hi, w = 0.1 * size, 0.9 * size, _width(size)

    def points(ys: list[float]) -> list[tuple[float, float]]:
        return [(lo + (hi - lo) * x, hi - (hi - lo) * y) for x, y in zip(np.linspace(0, 1, len(ys)), ys, strict=True)]

    draw.line(points(params["blue"]), fill=BLUE, width=w, joint="curve")
    draw.line(points(params["red"]), fill=RED, width=w, joint="curve")
    params["width"] = w
    question = f"How many times do the blue and red lines intersect? {COUNT_HINT}"
    return _probe(im, question, str(target), "line_intersections", "LineIntersections", params)


# ---------------------------------------------------------------- circled letter

WORDS = ("Acknowledgement", "Subdermatoglyphic", "tHyUiKaRbNqWeOpXcZvM", "Kaleidoscope",
         "Photosynthesis", "Quizzically", "Juxtaposition", "Zephyr")


def font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font at a pixel size, so every machine renders the same glyphs."""
    return ImageFont.load_default(size=px)


@family("circled_letter", SUITE, "CircledLetter",
        "A word with one letter circled in red; which letter is circled?")
def circled_letter(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    if rng.random() < 0.5:
        word = str(WORDS[int(rng.integers(len(WORDS)))])
    else:
        word = "".join(rng.choice(list(string.ascii_letters), int(rng.integers(5, 11))))
    index = int(rng.integers(len(word)))
    im, draw = _canvas(size)
    gap_ratio = 0.25  # space between letters, in font sizes, so each glyph stays a separate column run
    px = int(min(size * 0.8 / (len(word) * (0.75 + gap_ratio)), size * 0.25))
    face = font(px)
    advances = [draw.textbbox((0, 0), ch, font=face) for ch in word]
    gap = gap_ratio * px
    total = sum(b[2] - b[0] for b in advances) + gap * (len(word) - 1)
    x = (size - total) / 2
    baseline_top = size / 2 - px / 2
    boxes = []
    for ch, b in zip(word, advances, strict=True):
        left = x - b[0]
        draw.text((left, baseline_top), ch, fill=BLACK, font=face)
        boxes.append(draw.textbbox((left, baseline_top), ch, font=face))
        x += b[2] - b[0] + gap
    x0, y0, x1, y1 = boxes[index]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    rx, ry = (x1 - x0) / 2 + gap * 0.45, max(y1 - y0, px * 0.7) / 2 + gap * 0.6
    draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), outline=RED, width=max(1, _width(size, 250)))
    params = {"word": word, "index": index, "font_px": px,
              "letter_boxes": [[round(v, 1) for v in box] for box in boxes]}
    question = "Which letter is being circled?"
    return _probe(im, question, word[index], "circled_letter", "CircledLetter", params)


# ---------------------------------------------------------------- touching circles

RELATIONS = ("apart", "touching", "overlapping")


@family("touching_circles", SUITE, "OverlappingShapes",
        "Two circle outlines that are apart, exactly touching or overlapping; are they touching?")
def touching_circles(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    relation = RELATIONS[int(rng.integers(3))]
    w = _width(size)
    min_gap = max(4 * w, 0.03 * size)  # an "apart" pair has at least this much white between the outlines

    def attempt() -> dict | None:
        r1, r2 = rng.uniform(0.1, 0.22, 2) * size
        centre_distance = {"apart": r1 + r2 + w + rng.uniform(min_gap, 0.12 * size),
                           "touching": r1 + r2,
                           "overlapping": r1 + r2 - rng.uniform(min_gap, min(r1, r2))}[relation]
        angle = rng.uniform(0, 2 * np.pi)
        c1 = rng.uniform(0, size, 2)
        c2 = c1 + centre_distance * np.array([np.cos(angle), np.sin(angle)])
        inside = all(r + 2 * w <= c[k] <= size - r - 2 * w for c, r in ((c1, r1), (c2, r2)) for k in (0, 1))
        if not inside:
            return None
        return {"circles": [[round(float(v), 2) for v in (*c1, r1)], [round(float(v), 2) for v in (*c2, r2)]]}

    params = _until(rng, attempt, "touching_circles")
    colours = rng.choice(len(PALETTE), 2, replace=False)
    im, draw = _canvas(size)
    for (cx, cy, r), k in zip(params["circles"], colours, strict=True):
        # the outline's outer edge lies on radius r, so touching circles share their outer edge
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=PALETTE[int(k)], width=w)
    (x1, y1, r1), (x2, y2, r2) = params["circles"]
    gap = float(np.hypot(x2 - x1, y2 - y1) - r1 - r2)
    params.update(relation=relation, gap=round(gap, 2), width=w, colours=[PALETTE[int(k)] for k in colours])
    answer = "no" if gap > 0.5 else "yes"
    question = "Are the two circles touching or overlapping each other? Answer with Yes/No."
    return _probe(im, question, answer, "touching_circles", "OverlappingShapes", params)


# ---------------------------------------------------------------- nested squares

@family("nested_squares", SUITE, "NestedSquares", "2 to 5 squares nested in each other; how many squares?")
def nested_squares(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    count = int(rng.integers(2, 6))
    w = _width(size)
    min_gap = 3 * w  # white space between two nested outlines
    step = 2 * (min_gap + w)  # the least a square can shrink and still leave white on both sides
    side = rng.uniform(0.7, 0.9) * size
    spare = side - 0.1 * size - step * (count - 1)  # shared out at random between the nesting steps
    if spare < 0:
        raise ValueError(f"size {size} is too small for {count} nested squares; use size >= 128")
    x = y = (size - side) / 2
    squares = []
    for _ in range(count):
        squares.append([round(float(v), 2) for v in (x, y, side)])
        shrink = step + rng.uniform(0, spare / (count - 1))
        x += min_gap + w + rng.uniform(0, shrink - step)
        y += min_gap + w + rng.uniform(0, shrink - step)
        side -= shrink
    im, draw = _canvas(size)
    for sx, sy, s in squares:
        draw.rectangle((sx, sy, sx + s, sy + s), outline=BLACK, width=w)
    question = ("Count total number of squares in the image. "
                "Answer with only the number in numerical format in curly brackets e.g. {3}.")
    return _probe(im, question, str(count), "nested_squares", "NestedSquares",
                  {"squares": squares, "width": w})


# ---------------------------------------------------------------- subway map

# top, right, bottom, left, as fractions of the image size
STATIONS = {"A": (0.5, 0.08), "B": (0.92, 0.5), "C": (0.5, 0.92), "D": (0.08, 0.5)}


def _vertical(station: str) -> bool:
    """Top and bottom stations are left and entered vertically; side stations horizontally."""
    return STATIONS[station][0] == 0.5


def _route(start: str, end: str, via: tuple[float, float], lane: float) -> list[tuple[float, float]]:
    """An axis-aligned subway line: leave the start station inward, turn at `via`, enter the end station."""

    def leg(station: str) -> list[tuple[float, float]]:
        x, y = STATIONS[station]
        return [(x + lane, y), (x + lane, via[1])] if _vertical(station) else [(x, y + lane), (via[0], y + lane)]

    corner = [] if _vertical(start) == _vertical(end) else [via]  # joins a vertical and a horizontal leg
    return leg(start) + corner + leg(end)[::-1]


@family("subway_paths", SUITE, "SubwayMap",
        "Coloured subway lines between stations A-D; how many single-coloured paths join two stations?")
def subway_paths(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    start, end = (str(s) for s in rng.choice(list(STATIONS), 2, replace=False))
    target = int(rng.integers(0, 4))
    others = [(a, b) for a in STATIONS for b in STATIONS if a < b and {a, b} != {start, end}]
    extra = int(rng.integers(1, 6 - target))  # at least one other line, at most five lines in all
    pairs = [(start, end)] * target + [others[int(i)] for i in rng.integers(len(others), size=extra)]
    order = rng.permutation(len(pairs))
    lanes = np.linspace(-0.045, 0.045, len(pairs))  # each line reaches its stations at its own offset
    lines = []
    for slot, k in enumerate(order):
        a, b = pairs[int(k)]
        via = tuple(float(v) for v in rng.uniform(0.25, 0.75, 2).round(3))
        lines.append({"from": a, "to": b, "colour": PALETTE[slot], "lane": float(lanes[slot]), "via": via})
    im, draw = _canvas(size)
    w = _width(size, 110)
    radius = 0.06 * size
    for x, y in STATIONS.values():
        draw.ellipse((x * size - radius, y * size - radius, x * size + radius, y * size + radius),
                     fill=(225, 225, 225), outline=BLACK, width=1)
    for line in lines:
        pts = _route(line["from"], line["to"], line["via"], line["lane"])
        draw.line([(x * size, y * size) for x, y in pts], fill=line["colour"], width=w, joint="curve")
    face = font(max(10, int(0.06 * size)))
    for name, (x, y) in STATIONS.items():
        lx = x * size + (radius * 1.4 if x < 0.5 else -radius * 1.4 if x > 0.5 else radius * 1.2)
        ly = y * size + (radius * 1.2 if y < 0.5 else -radius * 1.2 if y > 0.5 else -radius * 1.6)
        draw.text((lx, ly), name, fill=BLACK, font=face, anchor="mm")
    answer = sum(1 for line in lines if {line["from"], line["to"]} == {start, end})
    question = (f"How many single-colored paths go from {start} to {end}? "
                "Answer with a number in curly brackets, e.g., {3}.")
    params = {"start": start, "end": end, "lines": lines, "width": w, "station_radius": radius,
              "stations": {k: [v[0] * size, v[1] * size] for k, v in STATIONS.items()}}
    return _probe(im, question, str(answer), "subway_paths", "SubwayMap", params)


# ---------------------------------------------------------------- grid rows and columns

@family("grid_rows_columns", SUITE, "CountingRowsAndColumns",
        "A blank table grid; how many rows and columns? (answer 'rows,columns')")
def grid_rows_columns(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    rows, cols = (int(v) for v in rng.integers(3, 10, 2))
    w = _width(size, 200)
    width, height = rng.uniform(0.6, 0.9, 2) * size
    x0, y0 = (size - width) / 2, (size - height) / 2
    xs = [round(float(x0 + width * i / cols), 2) for i in range(cols + 1)]
    ys = [round(float(y0 + height * j / rows), 2) for j in range(rows + 1)]
    if min(width / cols, height / rows) < 3 * w + 2:
        raise ValueError(f"size {size} is too small for a {rows}x{cols} grid; use size >= 128")
    im, draw = _canvas(size)
    for x in xs:
        draw.line((x, ys[0], x, ys[-1]), fill=BLACK, width=w)
    for y in ys:
        draw.line((xs[0], y, xs[-1], y), fill=BLACK, width=w)
    question = ("Count the number of rows and columns and answer with numbers in curly brackets. "
                "For example, rows={5} columns={6}")
    return _probe(im, question, f"{rows},{cols}", "grid_rows_columns", "CountingRowsAndColumns",
                  {"rows": rows, "columns": cols, "xs": xs, "ys": ys, "width": w})
