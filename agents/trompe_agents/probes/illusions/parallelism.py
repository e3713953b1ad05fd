"""Parallelism illusions: Zöllner (hatched columns) and the café wall (offset tile rows)."""

from __future__ import annotations

import math

import numpy as np

from trompe_agents.probes.base import Probe, family
from trompe_agents.probes.illusions.common import (
    ask_property, finish, ink, pick, signed, strength, target_colour,
)
from trompe_agents.probes.illusions.render import Canvas, Polygon, segment

TILT_STEPS = (1.0, 2.0, 4.0, 8.0)  # angle in degrees between neighbouring lines
TILT_UNIT = "degrees between neighbouring lines"  # what the magnitude axis of its families' plots measures
MAX_TILT = max(TILT_STEPS)


@family("zollner", suite="illusions", category="parallelism", magnitudes=TILT_STEPS, unit=TILT_UNIT,
        description="Parallel vertical lines crossed by short hatches that alternate in slant (they look "
                    "tilted); counterfactual: neighbouring lines really differ by `magnitude` degrees.")
def zollner(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    tilt = strength("zollner", counterfactual, magnitude, MAX_TILT)
    width = height = size
    count = int(rng.integers(4, 7))
    spacing = width / count
    xs = [round(spacing * (k + 0.5)) for k in range(count)]
    top, bottom = height * 0.07, height * 0.93
    cy = (top + bottom) / 2
    thick, hatch_w = max(2.0, size * 0.008), max(1.5, size * 0.006)
    hatch_gap = size * rng.uniform(0.045, 0.065)
    hatch_half = min(spacing * 0.42, hatch_gap * rng.uniform(0.7, 1.0))
    hatch_angle = math.radians(rng.uniform(30, 50))
    first = signed(rng)  # slant of the hatches on the first line; it alternates from line to line
    hatch_ink, (colour_name, colour) = ink(rng), target_colour(rng)
    question, answer, ask = ask_property(rng, tilt == 0, (
        "Are the long {colour} lines parallel to each other?",
        "Do all the {colour} lines run exactly parallel?"), (
        "Do any of the long {colour} lines lean towards or away from each other?",
        "Are the {colour} lines tilted relative to one another?"), colour=colour_name)

    canvas = Canvas(width, height)
    half = (bottom - top) / 2
    lines, hatches, angles = [], [], []
    for k, x in enumerate(xs):
        lean = math.radians(tilt / 2) * (1 if k % 2 == 0 else -1)  # lean from vertical, clockwise on screen
        angles.append(math.degrees(lean))
        ux, uy = math.sin(lean), math.cos(lean)  # unit vector along the line, pointing down
        lines.append(segment((x - ux * half, cy - uy * half), (x + ux * half, cy + uy * half), thick))
        slant = hatch_angle * first * (1 if k % 2 == 0 else -1)
        hx, hy = math.cos(slant + lean), -math.sin(slant + lean)
        for t in np.arange(-half + hatch_gap / 2, half, hatch_gap):
            px, py = x + ux * t, cy + uy * t
            hatches.append(segment((px - hx * hatch_half, py - hy * hatch_half),
                                   (px + hx * hatch_half, py + hy * hatch_half), hatch_w))
    canvas.paint(hatch_ink, hatches)
    canvas.paint(colour, lines)
    return finish("zollner", canvas, question, answer, ask, counterfactual, tilt, {
        "centres_x": xs, "y_range": [top, bottom], "lean_deg": angles, "thickness": thick,
        "hatch_gap": hatch_gap, "hatch_half_length": hatch_half, "hatch_angle_deg": math.degrees(hatch_angle),
        "first_slant": first, "hatch_width": hatch_w, "hatch_ink": hatch_ink, "colour": colour_name})


@family("cafe_wall", suite="illusions", category="parallelism", magnitudes=TILT_STEPS, unit=TILT_UNIT,
        description="Rows of black and white tiles offset by half a tile, separated by straight grey mortar "
                    "lines (they look wedged); counterfactual: neighbouring mortar lines differ by `magnitude` "
                    "degrees.")
def cafe_wall(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    tilt = strength("cafe_wall", counterfactual, magnitude, MAX_TILT)
    width = height = size
    rows = int(rng.integers(6, 10))
    row_h = height / rows
    tile = 4 * max(1, round(width / (4 * int(rng.integers(5, 9)))))  # offsets of tile/4 stay on whole pixels
    mortar = 2 * max(2, round(row_h * rng.uniform(0.04, 0.07)))  # even, so straight edges stay on whole pixels
    grey = int(rng.integers(100, 160))
    shift_pattern = pick(rng, ("half", "quarter"))
    cx = width / 2
    question, answer, ask = ask_property(rng, tilt == 0, (
        "Are the grey lines between the rows of tiles parallel?",
        "Do the horizontal grey lines between the tiles run parallel to each other?"), (
        "Do the grey lines between the tile rows slope towards or away from each other?",
        "Are the grey mortar lines between the rows tilted relative to one another?"))

    mids = [round(row_h * j) for j in range(1, rows)]  # mortar centre lines at x = cx
    slopes = [math.tan(math.radians(tilt / 2)) * (1 if j % 2 == 0 else -1) for j in range(len(mids))]

    def edge(j: int, x: float, below: bool) -> float:
        """y of the tile edge along mortar line j (j = -1 is the top of the picture, len(mids) the bottom)."""
        if j < 0:
            return -1.0
        if j >= len(mids):
            return height + 1.0
        return mids[j] + slopes[j] * (x - cx) + (mortar / 2 if below else -mortar / 2)

    canvas = Canvas(width, height, (grey, grey, grey))
    tiles: dict[int, list[Polygon]] = {0: [], 255: []}
    for r in range(rows):
        offset = (r % 2) * tile // 2 if shift_pattern == "half" else (r % 4 if r % 4 < 3 else 1) * tile // 4
        for k, xa in enumerate(range(-tile + offset, width + tile, tile)):
            xb = xa + tile
            shade = 0 if k % 2 == 0 else 255
            tiles[shade].append(Polygon([(xa, edge(r - 1, xa, True)), (xb, edge(r - 1, xb, True)),
                                         (xb, edge(r, xb, False)), (xa, edge(r, xa, False))]))
    for shade, shapes in tiles.items():
        canvas.paint((shade, shade, shade), shapes)
    return finish("cafe_wall", canvas, question, answer, ask, counterfactual, tilt, {
        "rows": rows, "tile": tile, "mortar": mortar, "mortar_grey": grey, "mortar_rows": mids,
        "mortar_slopes": slopes, "shift_pattern": shift_pattern})
