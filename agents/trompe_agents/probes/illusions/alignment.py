"""Alignment illusion: Poggendorff, a diagonal line interrupted by a vertical bar."""

from __future__ import annotations

import math

import numpy as np

from trompe_agents.probes.base import Probe, family
from trompe_agents.probes.illusions.common import ask_property, finish, signed, strength, target_colour
from trompe_agents.probes.illusions.render import Canvas, Polygon, segment

OFFSET_STEPS = (0.015, 0.03, 0.06, 0.1)  # vertical offset of the right segment, as a fraction of the size
OFFSET_UNIT = "offset, fraction of the image size"  # what the magnitude axis of its families' plots measures


@family("poggendorff", suite="illusions", category="alignment", magnitudes=OFFSET_STEPS, unit=OFFSET_UNIT,
        description="A straight diagonal line hidden behind a vertical bar (its parts look misaligned); "
                    "counterfactual: the right part is shifted vertically by `magnitude` × size.")
def poggendorff(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    shift = strength("poggendorff", counterfactual, magnitude, max(OFFSET_STEPS))
    width = height = size
    cx, cy = round(width / 2), round(height / 2)
    bar = round(size * rng.uniform(0.12, 0.2))
    slope = signed(rng) * math.tan(math.radians(rng.uniform(25, 40)))  # dy/dx on screen
    margin = size * 0.06
    thick = max(2.0, size * 0.01)
    offset = signed(rng) * shift * size
    grey = int(rng.integers(120, 200))
    colour_name, colour = target_colour(rng)
    question, answer, ask = ask_property(rng, offset == 0, (
        "If the {colour} line were continued behind the grey bar, would its two parts meet?",
        "Are the two {colour} segments on either side of the bar parts of one straight line?",
        "Is the {colour} segment on the right the exact continuation of the one on the left?"), (
        "Is the {colour} segment on the right out of line with the one on the left?",
        "Are the two {colour} segments offset from each other, so they would miss behind the bar?"),
        colour=colour_name)

    # keep both ends inside the picture
    reach = min(cx - margin, (cy - margin - size * max(OFFSET_STEPS)) / abs(slope))
    canvas = Canvas(width, height)
    canvas.paint(colour, [segment((cx - reach, cy - slope * reach), (cx, cy), thick),
                          segment((cx, cy + offset), (cx + reach, cy + slope * reach + offset), thick)])
    left, right = cx - bar / 2, cx + bar / 2
    canvas.paint((grey, grey, grey), [Polygon([(left, 0), (right, 0), (right, height), (left, height)])])
    return finish("poggendorff", canvas, question, answer, ask, counterfactual, shift, {
        "centre": [cx, cy], "bar": [left, right], "bar_grey": grey, "slope": slope, "reach": reach,
        "offset_px": offset, "thickness": thick, "colour": colour_name})
