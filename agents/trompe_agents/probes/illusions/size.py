"""Size illusions: Ebbinghaus, Delboeuf and irradiation, two targets side by side in different contexts."""

from __future__ import annotations

import math

import numpy as np

from trompe_agents.probes.base import Probe, family
from trompe_agents.probes.illusions.common import (
    ask_comparison, finish, landscape, pick, scaled_pair, strength, target_colour,
)
from trompe_agents.probes.illusions.render import Canvas, Disc, Polygon, regular_polygon

SIZE_STEPS = (0.05, 0.1, 0.2, 0.3)  # difference between the two targets relative to their mean
SIZE_UNIT = "size difference, fraction of the mean"  # what the magnitude axis of its families' plots measures
MAX_STEP = max(SIZE_STEPS)

CIRCLE_QUESTIONS = {
    "same": ("Are the two {colour} circles the same size?",
             "Is the {colour} circle on the left the same size as the {colour} circle on the right?",
             "Do the two {colour} circles have the same diameter?"),
    "differ": ("Is one of the two {colour} circles bigger than the other?",
               "Do the two {colour} circles differ in size?"),
    "more": ("Is the {colour} circle on the {a} bigger than the one on the {b}?",
             "Is the {colour} circle on the {a} larger than the {colour} circle on the {b}?"),
}


def cells(size: int) -> tuple[int, int, list[tuple[int, int]], float]:
    """A 5:3 picture split into a left and a right cell: width, height, whole-pixel cell centres, cell unit."""
    width, height = landscape(size, 0.6)
    unit = min(width / 2, height)
    return width, height, [(round(width / 4), round(height / 2)), (round(3 * width / 4), round(height / 2))], unit


def ring_of(centre: tuple[int, int], distance: float, radius: float, count: int, phase: float) -> list[Disc]:
    cx, cy = centre
    return [Disc((cx + distance * math.cos(phase + 2 * math.pi * k / count),
                  cy + distance * math.sin(phase + 2 * math.pi * k / count)), radius) for k in range(count)]


@family("ebbinghaus", suite="illusions", category="size", magnitudes=SIZE_STEPS, unit=SIZE_UNIT,
        description="Two equal circles, one ringed by large circles and one by small ones; counterfactual: "
                    "their radii differ by `magnitude` (relative to their mean).")
def ebbinghaus(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("ebbinghaus", counterfactual, magnitude, MAX_STEP)
    width, height, centres, unit = cells(size)
    base = unit * rng.uniform(0.075, 0.09)
    big_side = int(rng.integers(2))
    big_r, big_n = base * rng.uniform(1.4, 1.7), int(rng.integers(5, 7))
    small_r, small_n = base * rng.uniform(0.3, 0.42), int(rng.integers(7, 10))
    reach = base * (1 + MAX_STEP)
    distances = (reach + big_r + unit * 0.03, reach + small_r + unit * 0.025)
    grey = int(rng.integers(90, 170))
    colour_name, colour = target_colour(rng)
    phase = rng.uniform(0, 2 * math.pi)
    radii, larger = scaled_pair(rng, base, step)
    question, answer, ask = ask_comparison(rng, tuple(radii), **CIRCLE_QUESTIONS, colour=colour_name)

    canvas = Canvas(width, height)
    for side, centre in enumerate(centres):
        big = side == big_side
        ring = ring_of(centre, distances[0] if big else distances[1], big_r if big else small_r,
                       big_n if big else small_n, phase)
        canvas.paint((grey, grey, grey), ring)
        canvas.paint(colour, [Disc(centre, radii[side])])
    return finish("ebbinghaus", canvas, question, answer, ask, counterfactual, step, {
        "centres": centres, "radii": radii, "big_surround_side": big_side, "surround_radii": [big_r, small_r],
        "surround_counts": [big_n, small_n], "surround_distances": list(distances), "surround_grey": grey,
        "phase": phase, "colour": colour_name, "larger": larger})


@family("delboeuf", suite="illusions", category="size", magnitudes=SIZE_STEPS, unit=SIZE_UNIT,
        description="Two equal discs, one inside a close ring and one inside a wide ring; counterfactual: their "
                    "radii differ by `magnitude` (relative to their mean).")
def delboeuf(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("delboeuf", counterfactual, magnitude, MAX_STEP)
    width, height, centres, unit = cells(size)
    base = unit * rng.uniform(0.11, 0.14)
    close_side = int(rng.integers(2))
    line = max(1.5, unit * 0.015)
    close = base * (1 + MAX_STEP) + line + unit * rng.uniform(0.01, 0.03)
    wide = close + unit * rng.uniform(0.14, 0.18)
    grey = int(rng.integers(0, 120))
    colour_name, colour = target_colour(rng)
    radii, larger = scaled_pair(rng, base, step)
    question, answer, ask = ask_comparison(rng, tuple(radii), **CIRCLE_QUESTIONS, colour=colour_name)

    canvas = Canvas(width, height)
    rings = []
    for side, centre in enumerate(centres):
        outer = close if side == close_side else wide
        rings.append(Disc(centre, outer, hole=outer - line))
    canvas.paint((grey, grey, grey), rings)
    for side, centre in enumerate(centres):
        canvas.paint(colour, [Disc(centre, radii[side])])
    return finish("delboeuf", canvas, question, answer, ask, counterfactual, step, {
        "centres": centres, "radii": radii, "close_ring_side": close_side, "ring_radii": [close, wide],
        "ring_width": line, "ring_grey": grey, "colour": colour_name, "larger": larger})


def irradiation_shape(kind: str, centre: tuple[int, int], extent: float) -> Polygon:
    """A square with side `extent`, or a regular pentagon of the same area."""
    if kind == "square":
        cx, cy, h = centre[0], centre[1], extent / 2
        return Polygon([(cx - h, cy - h), (cx + h, cy - h), (cx + h, cy + h), (cx - h, cy + h)])
    circumradius = extent / math.sqrt(5 / 2 * math.sin(2 * math.pi / 5))
    return regular_polygon(centre, circumradius, 5)


@family("irradiation", suite="illusions", category="size", magnitudes=SIZE_STEPS, unit=SIZE_UNIT,
        description="A white shape on black beside an equal black shape on white; counterfactual: their sides "
                    "differ by `magnitude` (relative to their mean).")
def irradiation(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("irradiation", counterfactual, magnitude, MAX_STEP)
    width, height, centres, unit = cells(size)
    kind = pick(rng, ("square", "pentagon"))
    base = unit * rng.uniform(0.36, 0.48) / (1 + MAX_STEP) * (1 if kind == "square" else 0.92)
    dark_side = int(rng.integers(2))
    extents, larger = scaled_pair(rng, base, step)
    shade = ("white", "black") if dark_side == 0 else ("black", "white")
    question, answer, ask = ask_comparison(rng, tuple(extents), kind=kind, **{
        "same": ("Are the white {kind} and the black {kind} the same size?",
                 "Is the {kind} on the left exactly as big as the {kind} on the right?"),
        "differ": ("Is one of the two {kind}s bigger than the other?",
                   "Do the white {kind} and the black {kind} differ in size?"),
        "more": ("Is the {kind} on the {a} bigger than the {kind} on the {b}?",
                 "Is the {kind} on the {a} larger than the one on the {b}?")})

    canvas = Canvas(width, height)
    half = width // 2
    canvas.pixels[:, slice(0, half) if dark_side == 0 else slice(half, width)] = 0
    for side, centre in enumerate(centres):
        ink = (255, 255, 255) if side == dark_side else (0, 0, 0)
        canvas.paint(ink, [irradiation_shape(kind, centre, extents[side])])
    return finish("irradiation", canvas, question, answer, ask, counterfactual, step, {
        "shape": kind, "centres": centres, "extents": extents, "dark_side": dark_side, "shades": list(shade),
        "larger": larger, "half_width": half})
