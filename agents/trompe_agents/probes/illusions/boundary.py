"""Boundary illusion: the Chevreul staircase, flat strips that look scalloped (Mach bands at each step).

Drawn in both orientations, vertical strips side by side and horizontal strips stacked, because the illusion
paper's generalisation test goes from vertical to horizontal; the same seed gives the same staircase turned.
"""

from __future__ import annotations

import numpy as np

from trompe_agents.probes.base import Probe, family
from trompe_agents.probes.illusions.common import ask_property, finish, landscape, pick, strength
from trompe_agents.probes.illusions.render import Canvas

MERGE_STEPS = (1.0, 2.0)  # how many neighbouring pairs of strips share one value
MERGE_UNIT = "neighbouring strip pairs merged"  # what the magnitude axis of its families' plots measures
AFFIRM = ("The ticks split the picture into {n} {orientation} strips of equal {extent}. Is each strip a different "
          "shade from the strips next to it?",
          "There are {n} equal-{extent} {orientation} strips, marked by the ticks. Is there an edge between every "
          "pair of neighbouring strips?")
DENY = ("The ticks split the picture into {n} {orientation} strips of equal {extent}. Do any two neighbouring "
        "strips have exactly the same shade?",
        "There are {n} equal-{extent} {orientation} strips, marked by the ticks. Is there a pair of neighbouring "
        "strips with no edge between them?")


def staircase(name: str, rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float,
              horizontal: bool) -> Probe:
    """Strips along the long side with ticks at their edges; `horizontal` turns the picture a quarter."""
    merges = strength(name, counterfactual, magnitude, max(MERGE_STEPS))
    if merges != int(merges):
        raise ValueError(f"magnitude for {name} must be a whole number of merged pairs, got {magnitude!r}")
    length, depth = landscape(size, 0.5)
    count = int(rng.integers(5, 10))
    rise = int(rng.integers(12, 26))
    start = int(rng.integers(8, 256 - 8 - rise * (count - 1)))
    order = pick(rng, ("rising", "falling"))
    pairs = sorted(rng.permutation(count - 1)[: int(merges)].tolist())  # pair k joins strips k and k+1
    steps = np.full(count - 1, rise)
    steps[pairs] = 0
    values = start + np.concatenate([[0], np.cumsum(steps)])
    if order == "falling":
        values = values[::-1]
        pairs = sorted(count - 2 - k for k in pairs)
    question, answer, ask = ask_property(rng, not pairs, AFFIRM, DENY, n=count,
                                         orientation="horizontal" if horizontal else "vertical",
                                         extent="height" if horizontal else "width")

    edges = [round(k * length / count) for k in range(count + 1)]
    band = round(depth * 0.85)
    image = np.full((depth, length), 255.0)  # drawn vertical, then turned for the horizontal family
    for k in range(count):
        image[:band, edges[k]:edges[k + 1]] = values[k]
    tick = max(1, round(length * 0.004))
    for x in edges[1:-1]:
        image[band:band + round(depth * 0.08), x - tick:x + tick] = 0
    if horizontal:
        image = image.T
    canvas = Canvas(image.shape[1], image.shape[0])
    canvas.pixels[:] = image[..., None]
    return finish(name, canvas, question, answer, ask, counterfactual, merges, {
        "values": values.tolist(), "edges": edges, "band_height": band, "merged_pairs": pairs, "order": order,
        "orientation": "horizontal" if horizontal else "vertical"})


@family("chevreul", suite="illusions", category="boundary", magnitudes=MERGE_STEPS, unit=MERGE_UNIT,
        description="A staircase of equal-width vertical grey strips, each a different flat shade (edges look "
                    "scalloped); counterfactual: `magnitude` neighbouring pairs share a shade, so no edge there.")
def chevreul(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    return staircase("chevreul", rng, size, counterfactual, magnitude, horizontal=False)


@family("chevreul_horizontal", suite="illusions", category="boundary", magnitudes=MERGE_STEPS, unit=MERGE_UNIT,
        description="The Chevreul staircase turned a quarter: equal-height horizontal strips stacked top to "
                    "bottom, ticks on the right; counterfactual: `magnitude` neighbouring pairs share a shade.")
def chevreul_horizontal(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    return staircase("chevreul_horizontal", rng, size, counterfactual, magnitude, horizontal=True)
