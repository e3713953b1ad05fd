"""Boundary illusion: the Chevreul staircase, flat strips that look scalloped (Mach bands at each step)."""

from __future__ import annotations

import numpy as np

from trompe_agents.probes.base import Probe, family
from trompe_agents.probes.illusions.common import ask_property, finish, landscape, pick, strength
from trompe_agents.probes.illusions.render import Canvas

MERGE_STEPS = (1.0, 2.0)  # how many neighbouring pairs of strips share one value


@family("chevreul", suite="illusions", category="boundary", magnitudes=MERGE_STEPS,
        description="A staircase of equal-width grey strips, each a different flat shade (edges look "
                    "scalloped); counterfactual: `magnitude` neighbouring pairs share a shade, so no edge there.")
def chevreul(rng: np.random.Generator, size: int, counterfactual: bool, magnitude: float) -> Probe:
    merges = strength("chevreul", counterfactual, magnitude, max(MERGE_STEPS))
    if merges != int(merges):
        raise ValueError(f"magnitude for chevreul must be a whole number of merged pairs, got {magnitude!r}")
    width, height = landscape(size, 0.5)
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
    question, answer, ask = ask_property(rng, not pairs, (
        "The ticks split the picture into {n} vertical strips of equal width. Is each strip a different "
        "shade from the strips next to it?",
        "There are {n} equal-width vertical strips, marked by the ticks. Is there an edge between every pair "
        "of neighbouring strips?"), (
        "The ticks split the picture into {n} vertical strips of equal width. Do any two neighbouring strips "
        "have exactly the same shade?",
        "There are {n} equal-width vertical strips, marked by the ticks. Is there a pair of neighbouring "
        "strips with no edge between them?"), n=count)

    edges = [round(k * width / count) for k in range(count + 1)]
    band = round(height * 0.85)
    image = np.full((height, width), 255.0)
    for k in range(count):
        image[:band, edges[k]:edges[k + 1]] = values[k]
    tick = max(1, round(width * 0.004))
    for x in edges[1:-1]:
        image[band:band + round(height * 0.08), x - tick:x + tick] = 0
    canvas = Canvas(width, height)
    canvas.pixels[:] = image[..., None]
    return finish("chevreul", canvas, question, answer, ask, counterfactual, merges, {
        "values": values.tolist(), "edges": edges, "band_height": band, "merged_pairs": pairs, "order": order})
