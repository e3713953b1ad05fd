"""Colour and lightness illusions: simultaneous contrast, White's, Cornsweet, and circles on coloured surrounds.

Compared regions are flat and pixel-aligned, so every pixel there holds exactly the value the answer rests on.
"""

from __future__ import annotations

import colorsys

import numpy as np

from trompe_agents.probes.base import Probe, family
from trompe_agents.probes.illusions.common import (
    ask_comparison, ask_property, finish, landscape, pick, signed, strength,
)
from trompe_agents.probes.illusions.render import Canvas, Disc

SHADE_STEPS = (0.02, 0.05, 0.1, 0.2)  # difference between the compared values, as a fraction of 255
SHADE_UNIT = "difference, fraction of 255"  # what the magnitude axis of its families' plots measures
MAX_SHADE = max(SHADE_STEPS)


def shade_pair(rng: np.random.Generator, base: int, step: float) -> tuple[list[int], int, int]:
    """Two grey levels: equal, or one of them (drawn from rng) lighter or darker by round(step × 255)."""
    which, sign = int(rng.integers(2)), signed(rng)
    levels = [base, base]
    levels[which] = base + sign * round(step * 255)
    return levels, which, sign


def flat_base(rng: np.random.Generator) -> int:
    """A middle level that stays in 0..255 after the largest shift."""
    room = round(MAX_SHADE * 255) + 8
    return int(rng.integers(room, 256 - room))


SHADE_SIDES = {
    "same": ("Are the two {thing} the same shade of grey?",
             "Do the {thing} on the left and on the right have exactly the same colour?",
             "Is the grey of the {thing} identical on both sides?"),
    "differ": ("Is one of the two {thing} a different shade from the other?",
               "Do the {thing} on the left and on the right differ in lightness?"),
    "more": ("Is the {thing_one} on the {a} lighter than the one on the {b}?",
             "Is the {thing_one} on the {a} brighter than the {thing_one} on the {b}?"),
}


@family("simultaneous_contrast", suite="illusions", category="colour", magnitudes=SHADE_STEPS, unit=SHADE_UNIT,
        description="Two equal grey squares on a dark and a light background (they look different); "
                    "counterfactual: their greys differ by `magnitude` × 255.")
def simultaneous_contrast(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("simultaneous_contrast", counterfactual, magnitude, MAX_SHADE)
    width, height = landscape(size, 0.5)
    dark, light = int(rng.integers(0, 50)), int(rng.integers(205, 256))
    dark_side = int(rng.integers(2))
    backdrop = pick(rng, ("halves", "gradient"))
    side = round(height * rng.uniform(0.25, 0.4))
    levels, changed, sign = shade_pair(rng, flat_base(rng), step)
    question, answer, ask = ask_comparison(rng, tuple(levels), **SHADE_SIDES, thing="small squares",
                                           thing_one="square")

    canvas = Canvas(width, height)
    ends = (dark, light) if dark_side == 0 else (light, dark)
    if backdrop == "halves":
        canvas.pixels[:, : width // 2] = ends[0]
        canvas.pixels[:, width // 2:] = ends[1]
    else:
        canvas.pixels[:] = np.linspace(ends[0], ends[1], width)[None, :, None]
    boxes = []
    for k, cx in enumerate((width // 4, 3 * width // 4)):
        x0, y0 = cx - side // 2, height // 2 - side // 2
        canvas.pixels[y0:y0 + side, x0:x0 + side] = levels[k]
        boxes.append([x0, y0, x0 + side, y0 + side])
    return finish("simultaneous_contrast", canvas, question, answer, ask, counterfactual, step, {
        "levels": levels, "boxes": boxes, "background": backdrop, "background_ends": list(ends),
        "changed": changed, "sign": sign})


@family("whites", suite="illusions", category="colour", magnitudes=SHADE_STEPS, unit=SHADE_UNIT,
        description="White's illusion: equal grey bars set into black stripes on one side and white stripes "
                    "on the other; counterfactual: the two sides' greys differ by `magnitude` × 255.")
def whites(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("whites", counterfactual, magnitude, MAX_SHADE)
    width = height = size
    stripes = int(rng.integers(5, 8)) * 2 + 1
    stripe = height // stripes
    top = (height - stripe * stripes) // 2
    first_black = int(rng.integers(2))
    bar_w = round(width * rng.uniform(0.2, 0.3))
    levels, changed, sign = shade_pair(rng, flat_base(rng), step)
    black_side = int(rng.integers(2))  # the side whose bars sit on black stripes
    question, answer, ask = ask_comparison(rng, tuple(levels), **SHADE_SIDES, thing="grey bars",
                                           thing_one="grey bar")

    canvas = Canvas(width, height)
    black_rows = [k for k in range(stripes) if (k + first_black) % 2 == 1]
    for k in black_rows:
        canvas.pixels[top + k * stripe: top + (k + 1) * stripe] = 0
    bars = []
    for s, cx in enumerate((width // 4, 3 * width // 4)):
        on_black = s == black_side
        for k in range(2, stripes - 2):
            if (k in black_rows) == on_black:
                x0, y0 = cx - bar_w // 2, top + k * stripe
                canvas.pixels[y0:y0 + stripe, x0:x0 + bar_w] = levels[s]
                bars.append([s, x0, y0, x0 + bar_w, y0 + stripe])
    return finish("whites", canvas, question, answer, ask, counterfactual, step, {
        "levels": levels, "stripe_height": stripe, "stripes": stripes, "top": top, "first_black": first_black,
        "black_side": black_side, "bars": bars, "changed": changed, "sign": sign})


@family("cornsweet", suite="illusions", category="colour", magnitudes=SHADE_STEPS, unit=SHADE_UNIT,
        description="Two equal grey halves meeting at an edge with opposite ramps (one looks lighter); "
                    "counterfactual: the flat parts of the halves differ by `magnitude` × 255.")
def cornsweet(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("cornsweet", counterfactual, magnitude, MAX_SHADE)
    width, height = landscape(size, 0.5)
    ramp = round(width * rng.uniform(0.1, 0.16))
    swing = int(rng.integers(25, 45)) * signed(rng)  # + makes the right side of the edge lighter
    levels, changed, sign = shade_pair(rng, int(rng.integers(96, 160)), step)
    question, answer, ask = ask_comparison(rng, tuple(levels), **{
        "same": ("Away from the edge in the middle, are the left and right halves the same shade of grey?",
                 "Apart from the strip near the central edge, are both halves of the picture equally light?"),
        "differ": ("Away from the central edge, is one half of the picture darker than the other?",
                   "Do the two large grey areas either side of the middle differ in lightness?"),
        "more": ("Away from the central edge, is the {a} half lighter than the {b} half?",
                 "Is the large grey area on the {a} brighter than the one on the {b}?")})

    mid = width // 2
    x = np.arange(width)
    distance = np.where(x < mid, mid - 1 - x, x - mid)  # 0 at the two columns next to the edge
    falloff = np.clip(1 - distance / ramp, 0, 1) ** 2
    row = np.where(x < mid, levels[0] - swing * falloff, levels[1] + swing * falloff)
    canvas = Canvas(width, height)
    canvas.pixels[:] = np.rint(row)[None, :, None]
    return finish("cornsweet", canvas, question, answer, ask, counterfactual, step, {
        "levels": levels, "ramp": ramp, "swing": swing, "edge_x": mid, "changed": changed, "sign": sign})


@family("colour_circles", suite="illusions", category="colour", magnitudes=SHADE_STEPS, unit=SHADE_UNIT,
        description="Two circles of one colour on two different coloured surrounds (they look different); "
                    "counterfactual: one channel of one circle differs by `magnitude` × 255.")
def colour_circles(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    step = strength("colour_circles", counterfactual, magnitude, MAX_SHADE)
    width, height = landscape(size, 0.5)
    hue = rng.uniform(0, 1)
    surrounds = [tuple(round(255 * c) for c in colorsys.hsv_to_rgb((hue + h) % 1, rng.uniform(0.6, 0.9),
                                                                   rng.uniform(0.7, 0.95))) for h in (0, 0.5)]
    fill = tuple(flat_base(rng) for _ in range(3))
    radius = height * rng.uniform(0.18, 0.26)
    which, channel, sign = int(rng.integers(2)), int(rng.integers(3)), signed(rng)
    colours = [list(fill), list(fill)]
    colours[which][channel] += sign * round(step * 255)
    question, answer, ask = ask_property(rng, colours[0] == colours[1], (
        "Are the two circles the same colour?",
        "Is the circle on the left exactly the same colour as the circle on the right?",
        "Do the two circles have identical colours?"), (
        "Are the two circles different colours?",
        "Does the circle on the left differ in colour from the one on the right?"))

    canvas = Canvas(width, height)
    canvas.pixels[:, : width // 2] = surrounds[0]
    canvas.pixels[:, width // 2:] = surrounds[1]
    centres = [(width // 4, height // 2), (3 * width // 4, height // 2)]
    for centre, colour in zip(centres, colours):
        canvas.paint(tuple(colour), [Disc(centre, radius)])
    return finish("colour_circles", canvas, question, answer, ask, counterfactual, step, {
        "colours": colours, "surrounds": [list(s) for s in surrounds], "centres": centres, "radius": radius,
        "changed": which, "channel": channel, "sign": sign})
