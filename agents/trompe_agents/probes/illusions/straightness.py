"""Straightness illusions: Hering and Wundt (lines over a fan) and Orbison (a square over concentric rings)."""

from __future__ import annotations

import math

import numpy as np

from trompe_agents.probes.base import Probe, family
from trompe_agents.probes.illusions.common import ask_property, finish, ink, signed, strength, target_colour
from trompe_agents.probes.illusions.render import Canvas, Disc, Polygon, bowed, segment, stroke

BEND_STEPS = (0.01, 0.02, 0.04, 0.08)  # sagitta of the bend as a fraction of the line's length
BEND_UNIT = "bend, fraction of the line's length"  # what the magnitude axis of its families' plots measures
MAX_BEND = max(BEND_STEPS)

LINE_QUESTIONS = {
    "affirm": ("Are the two {colour} lines straight?",
               "Are both {colour} lines perfectly straight?",
               "Is each of the {colour} lines straight rather than curved?"),
    "deny": ("Are the {colour} lines curved?",
             "Do the two {colour} lines bend?",
             "Is either of the {colour} lines bowed?"),
}


def fan(origin: tuple[float, float], angles: np.ndarray, reach: float, width: float) -> list[Polygon]:
    """Rays from `origin` at `angles`, long enough to leave the picture."""
    ox, oy = origin
    return [segment((ox - reach * math.cos(a), oy - reach * math.sin(a)),
                    (ox + reach * math.cos(a), oy + reach * math.sin(a)), width) for a in angles]


def two_lines(rng: np.random.Generator, name: str, size: int, counterfactual: bool, magnitude: float,
              fan_origins: list[tuple[float, float]], angles: np.ndarray) -> Probe:
    """Two horizontal target lines over fan(s) of rays; bent by `magnitude` in the counterfactual."""
    bend = strength(name, counterfactual, magnitude, MAX_BEND)
    width = height = size
    gap = round(height * rng.uniform(0.13, 0.2))
    rows = (round(height / 2) - gap, round(height / 2) + gap)
    margin = round(width * rng.uniform(0.06, 0.1))
    length = width - 2 * margin
    thick, ray = max(2.0, size * 0.012), max(1.0, size * 0.004)
    direction = signed(rng)  # +1 bows both lines away from the middle, -1 towards it
    ray_ink, (colour_name, colour) = ink(rng), target_colour(rng)
    question, answer, ask = ask_property(rng, bend == 0, **LINE_QUESTIONS, colour=colour_name)

    canvas = Canvas(width, height)
    canvas.paint(ray_ink, [r for origin in fan_origins for r in fan(origin, angles, 2 * size, ray)])
    sagitta = bend * length
    lines = []
    for k, y in enumerate(rows):
        away = direction * (1 if k == 1 else -1)  # down for the lower line, up for the upper one
        # bowed() offsets along (-dy, dx) of p->q, which for a left-to-right line is +y (down)
        lines.append(stroke(bowed((margin, y), (width - margin, y), away * sagitta), thick))
    canvas.paint(colour, lines)
    return finish(name, canvas, question, answer, ask, counterfactual, bend, {
        "rows": list(rows), "x_range": [margin, width - margin], "thickness": thick, "sagitta_px": sagitta,
        "direction": direction, "fan_origins": fan_origins, "ray_angles_deg": np.degrees(angles).tolist(),
        "ray_width": ray, "ray_ink": ray_ink, "colour": colour_name})


@family("hering", suite="illusions", category="straightness", magnitudes=BEND_STEPS, unit=BEND_UNIT,
        description="Two straight parallel lines over rays from the centre (they look bowed outwards); "
                    "counterfactual: the lines really bow, sagitta `magnitude` × length.")
def hering(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    count = int(rng.integers(12, 20))
    angles = np.linspace(0, math.pi, count, endpoint=False) + rng.uniform(0, math.pi / count)
    return two_lines(rng, "hering", size, counterfactual, magnitude, [(size / 2, size / 2)], angles)


@family("wundt", suite="illusions", category="straightness", magnitudes=BEND_STEPS, unit=BEND_UNIT,
        description="Two straight parallel lines over rays converging on points left and right (they look "
                    "bowed inwards); counterfactual: the lines really bow, sagitta `magnitude` × length.")
def wundt(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    count = int(rng.integers(6, 10))
    spread = math.radians(rng.uniform(35, 55))
    angles = np.linspace(-spread, spread, count)
    return two_lines(rng, "wundt", size, counterfactual, magnitude,
                     [(-size * 0.05, size / 2), (size * 1.05, size / 2)], angles)


@family("orbison", suite="illusions", category="straightness", magnitudes=BEND_STEPS, unit=BEND_UNIT,
        description="A square over concentric circles (its sides look bent); counterfactual: the sides really "
                    "bow, sagitta `magnitude` × side.")
def orbison(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    bend = strength("orbison", counterfactual, magnitude, MAX_BEND)
    width = height = size
    centre = (size / 2, size / 2)
    side = round(size * rng.uniform(0.4, 0.55))
    ring_gap, ring = size * rng.uniform(0.035, 0.05), max(1.0, size * 0.004)
    thick = max(2.0, size * 0.012)
    direction = signed(rng)  # +1 bows the sides inwards, -1 outwards
    ring_ink, (colour_name, colour) = ink(rng), target_colour(rng)
    question, answer, ask = ask_property(rng, bend == 0, (
        "Are the sides of the {colour} square straight?",
        "Is every side of the {colour} square a straight line?"), (
        "Are the sides of the {colour} square bent?",
        "Does the {colour} square have curved sides?"), colour=colour_name)

    canvas = Canvas(width, height, (255, 255, 255))
    radii = np.arange(ring_gap, size * 0.75, ring_gap)
    # largest first: each ring's hole is cleared before the smaller rings inside it are drawn
    canvas.paint(ring_ink, [Disc(centre, r + ring / 2, hole=r - ring / 2) for r in radii[::-1]])
    x0, y0 = round(centre[0] - side / 2), round(centre[1] - side / 2)
    corners = [(x0, y0), (x0 + side, y0), (x0 + side, y0 + side), (x0, y0 + side)]
    sagitta = bend * side
    # corners run clockwise on screen, so bowed()'s offset direction (-dy, dx) points into the square
    sides = [stroke(bowed(corners[k], corners[(k + 1) % 4], direction * sagitta), thick) for k in range(4)]
    h = thick / 2
    caps = [Polygon([(x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)]) for x, y in corners]
    canvas.paint(colour, sides + caps)
    return finish("orbison", canvas, question, answer, ask, counterfactual, bend, {
        "corners": corners, "side": side, "thickness": thick, "sagitta_px": sagitta, "direction": direction,
        "ring_radii": radii.tolist(), "ring_width": ring, "ring_ink": ring_ink, "colour": colour_name})
