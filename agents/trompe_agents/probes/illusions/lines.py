"""Line-length illusions: Müller-Lyer (two shafts; three markers A-B-C) and Ponzo (bars between rails)."""

from __future__ import annotations

import math

import numpy as np

from trompe_agents.probes.base import Probe, family
from trompe_agents.probes.illusions.common import (
    ask_comparison, finish, ink, landscape, pick, scaled_pair, signed, strength, target_colour,
)
from trompe_agents.probes.illusions.render import Canvas, Disc, Point, Polygon, segment, stroke
from trompe_agents.probes.illusions.size import MAX_STEP, SIZE_STEPS, SIZE_UNIT

LENGTH_QUESTIONS = {
    "same": ("Are the two {colour} lines the same length?",
             "Is the {a} {colour} line exactly as long as the {b} one?",
             "Do the two {colour} lines have equal length?"),
    "differ": ("Is one {colour} line longer than the other?",
               "Do the two {colour} lines differ in length?"),
    "more": ("Is the {a} {colour} line longer than the {b} one?",
             "Is the {colour} line at the {a} longer than the {colour} line at the {b}?"),
}
UPPER_LOWER = ("upper", "lower")
TOP_BOTTOM = ("top", "bottom")


def fins(vertex: Point, direction: int, length: float, angle: float, width: float) -> Polygon:
    """A chevron of two fins meeting at `vertex`, opening towards +x (direction 1) or -x (direction -1)."""
    x, y = vertex
    dx, dy = direction * length * math.cos(angle), length * math.sin(angle)
    return stroke([(x + dx, y - dy), vertex, (x + dx, y + dy)], width)


@family("muller_lyer", suite="illusions", category="line length", magnitudes=SIZE_STEPS, unit=SIZE_UNIT,
        description="Two equal shafts, one with inward and one with outward fins; counterfactual: their "
                    "lengths differ by `magnitude` (relative to their mean).")
def muller_lyer(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("muller_lyer", counterfactual, magnitude, MAX_STEP)
    width, height = landscape(size, 0.75)
    base = width * rng.uniform(0.36, 0.46) / (1 + MAX_STEP)
    thick = max(2.0, size * 0.012)
    fin_len, fin_angle = base * rng.uniform(0.18, 0.28), math.radians(rng.uniform(28, 45))
    outward_row = int(rng.integers(2))  # the row whose fins point away from its shaft (looks longer)
    rows = (round(height * 0.3), round(height * 0.7))
    cx = round(width / 2 + width * rng.uniform(-0.04, 0.04))
    fin_ink, (colour_name, colour) = ink(rng), target_colour(rng)
    lengths, larger = scaled_pair(rng, base, step)
    question, answer, ask = ask_comparison(rng, tuple(lengths), names=pick(rng, (UPPER_LOWER, TOP_BOTTOM)),
                                           **LENGTH_QUESTIONS, colour=colour_name)

    canvas = Canvas(width, height)
    shafts = []
    for row, (y, length) in enumerate(zip(rows, lengths)):
        away = 1 if row == outward_row else -1
        left, right = (cx - length / 2, y), (cx + length / 2, y)
        canvas.paint(fin_ink, [fins(left, -away, fin_len, fin_angle, thick), fins(right, away, fin_len, fin_angle,
                                                                                   thick)])
        shafts.append(segment(left, right, thick))
    canvas.paint(colour, shafts)
    return finish("muller_lyer", canvas, question, answer, ask, counterfactual, step, {
        "rows": list(rows), "centre_x": cx, "lengths": lengths, "thickness": thick, "fin_length": fin_len,
        "fin_angle_deg": math.degrees(fin_angle), "outward_row": outward_row, "fin_ink": fin_ink,
        "colour": colour_name, "larger": larger})


@family("muller_lyer_markers", suite="illusions", category="line length", magnitudes=SIZE_STEPS, unit=SIZE_UNIT,
        description="Brentano's form: markers A, B, C on one line with fins; AB equals BC; counterfactual: "
                    "B moves so AB and BC differ by `magnitude` (relative to their mean).")
def muller_lyer_markers(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("muller_lyer_markers", counterfactual, magnitude, MAX_STEP)
    width, height = landscape(size, 0.5)
    half = width * rng.uniform(0.34, 0.4)
    thick = max(2.0, size * 0.008)
    fin_len, fin_angle = half * rng.uniform(0.2, 0.3), math.radians(rng.uniform(28, 45))
    opening = signed(rng)  # fins at A and C open this way, at B the other way
    y, cx = round(height * 0.58), round(width / 2)
    fin_ink, (colour_name, colour) = ink(rng), target_colour(rng)
    lengths, larger = scaled_pair(rng, half, step)
    shift = (lengths[0] - lengths[1]) / 2  # keep A and C fixed, move B
    xs = (cx - half, cx + shift, cx + half)
    question, answer, ask = ask_comparison(rng, (xs[1] - xs[0], xs[2] - xs[1]), names=("AB", "BC"), **{
        "same": ("Is the distance from A to B the same as the distance from B to C?",
                 "Is point B exactly halfway between A and C?",
                 "Are the stretches A–B and B–C equally long?"),
        "differ": ("Is B closer to one end than to the other?",
                   "Are the distances A–B and B–C different?"),
        "more": ("Is the distance {a} longer than the distance {b}?",
                 "Is stretch {a} longer than stretch {b}?")})

    canvas = Canvas(width, height)
    canvas.paint(fin_ink, [segment((xs[0], y), (xs[2], y), thick)] + [
        fins((x, y), opening * (-1 if k == 1 else 1), fin_len, fin_angle, thick) for k, x in enumerate(xs)])
    dot = thick * 2.2
    canvas.paint(colour, [Disc((x, y), dot) for x in xs])
    for label, x in zip("ABC", xs):
        canvas.text((x, y - fin_len * math.sin(fin_angle) - height * 0.12), label, size=height * 0.12)
    return finish("muller_lyer_markers", canvas, question, answer, ask, counterfactual, step, {
        "row": y, "marker_x": list(xs), "marker_radius": dot, "thickness": thick, "fin_length": fin_len,
        "fin_angle_deg": math.degrees(fin_angle), "opening": opening, "fin_ink": fin_ink, "colour": colour_name,
        "larger": larger})


@family("ponzo", suite="illusions", category="line length", magnitudes=SIZE_STEPS, unit=SIZE_UNIT,
        description="Two equal bars between converging rails, one where they are close and one where they are "
                    "far apart; counterfactual: bar lengths differ by `magnitude` (relative to their mean).")
def ponzo(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("ponzo", counterfactual, magnitude, MAX_STEP)
    width = height = size
    cx = width / 2
    apex_half, foot_half = width * rng.uniform(0.1, 0.16), width * rng.uniform(0.42, 0.48)
    top, bottom = height * 0.04, height * 0.96
    rail = max(2.0, size * 0.01)
    rows = (round(height * rng.uniform(0.26, 0.32)), round(height * rng.uniform(0.7, 0.78)))

    def rail_half(y: float) -> float:
        return apex_half + (foot_half - apex_half) * (y - top) / (bottom - top)

    base = 2 * (rail_half(rows[0]) - rail) * rng.uniform(0.55, 0.75) / (1 + MAX_STEP)
    thick = max(2.0, size * 0.014)
    rail_ink, (colour_name, colour) = ink(rng), target_colour(rng)
    lengths, larger = scaled_pair(rng, base, step)
    question, answer, ask = ask_comparison(rng, tuple(lengths), names=pick(rng, (UPPER_LOWER, TOP_BOTTOM)),
                                           **LENGTH_QUESTIONS, colour=colour_name)

    canvas = Canvas(width, height)
    canvas.paint(rail_ink, [segment((cx - apex_half, top), (cx - foot_half, bottom), rail),
                            segment((cx + apex_half, top), (cx + foot_half, bottom), rail)])
    canvas.paint(colour, [segment((cx - length / 2, y), (cx + length / 2, y), thick)
                          for y, length in zip(rows, lengths)])
    return finish("ponzo", canvas, question, answer, ask, counterfactual, step, {
        "rows": list(rows), "lengths": lengths, "thickness": thick, "rail_width": rail,
        "rail_half_widths": [apex_half, foot_half], "rail_ink": rail_ink, "colour": colour_name,
        "larger": larger})
