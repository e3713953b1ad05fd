"""What every illusion family shares: target colours, magnitude checks, question phrasing and the Probe."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from trompe_agents.probes.base import FAMILIES, Probe
from trompe_agents.probes.illusions.render import Canvas, Colour

# Saturated targets drawn over achromatic context, so a target pixel's chroma tells how much of it is target.
TARGET_COLOURS: dict[str, Colour] = {
    "red": (220, 30, 30),
    "blue": (30, 70, 230),
    "green": (20, 160, 50),
    "orange": (240, 130, 0),
    "purple": (150, 40, 200),
}


def pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    """One element of `options`, drawn from rng (works for sequences of tuples, unlike rng.choice)."""
    return options[int(rng.integers(len(options)))]


def target_colour(rng: np.random.Generator) -> tuple[str, Colour]:
    name = pick(rng, sorted(TARGET_COLOURS))
    return name, TARGET_COLOURS[name]


def strength(family: str, counterfactual: bool, magnitude: float, limit: float) -> float:
    """The departure actually applied: `magnitude` for a counterfactual (checked), 0 for the genuine illusion."""
    if not counterfactual:
        return 0.0
    if not (isinstance(magnitude, (int, float)) and 0 < magnitude <= limit):
        raise ValueError(f"magnitude for {family} must be in (0, {limit}], got {magnitude!r}")
    return float(magnitude)


def ask_property(rng: np.random.Generator, holds: bool, affirm: Sequence[str], deny: Sequence[str],
                 **fill: Any) -> tuple[str, str, dict[str, Any]]:
    """A yes/no question that either asserts the property (`affirm`) or its negation (`deny`)."""
    form = pick(rng, ("affirm", "deny"))
    question = pick(rng, affirm if form == "affirm" else deny).format(**fill)
    yes = holds if form == "affirm" else not holds
    return question, "yes" if yes else "no", {"form": form}


def ask_comparison(rng: np.random.Generator, values: tuple[float, float], same: Sequence[str],
                   differ: Sequence[str], more: Sequence[str] = (),
                   names: tuple[str, str] = ("left", "right"), **fill: str) -> tuple[str, str, dict[str, Any]]:
    """Ask whether two measured values are equal, differ, or (with `more`) whether {a} exceeds {b}.

    The rng draws are the same whatever the values, so a genuine probe and its counterfactual with the same
    seed get the same question.
    """
    forms = ("same", "differ", "more") if more else ("same", "differ")
    form = pick(rng, forms)
    order = (0, 1) if rng.integers(2) == 0 else (1, 0)
    template = pick(rng, {"same": same, "differ": differ, "more": more}[form])
    question = template.format(a=names[order[0]], b=names[order[1]], **fill)
    equal = math.isclose(values[0], values[1], rel_tol=1e-9, abs_tol=1e-9)
    if form == "same":
        yes = equal
    elif form == "differ":
        yes = not equal
    else:
        yes = not equal and values[order[0]] > values[order[1]]
    return question, "yes" if yes else "no", {"form": form, "order": list(order)}


def finish(family: str, canvas: Canvas, question: str, answer: str, ask: dict[str, Any],
           counterfactual: bool, magnitude: float, params: dict[str, Any]) -> Probe:
    """Assemble the Probe; `ask` records how the question was put so the answer can be rechecked."""
    return Probe(image=canvas.image(), question=question, answer=answer, family=family,
                 category=FAMILIES[family].category, magnitude=magnitude, counterfactual=counterfactual,
                 params={**params, "ask": ask, "width": canvas.width, "height": canvas.height})


def landscape(size: int, ratio: float) -> tuple[int, int]:
    """Width and height for a picture whose long side is `size`."""
    return size, max(1, round(size * ratio))


def signed(rng: np.random.Generator) -> int:
    return 1 if rng.integers(2) == 0 else -1


def scaled_pair(rng: np.random.Generator, base: float, step: float) -> tuple[list[float], int]:
    """Two sizes around `base` whose difference is `step` × their mean; which one is larger is drawn from rng."""
    larger = int(rng.integers(2))
    sizes = [base * (1 - step / 2)] * 2
    sizes[larger] = base * (1 + step / 2)
    return sizes, larger


def ink(rng: np.random.Generator) -> Colour:
    """A near-black grey for the inducing context (fins, rays, rails, hatches)."""
    level = int(rng.integers(0, 70))
    return level, level, level
