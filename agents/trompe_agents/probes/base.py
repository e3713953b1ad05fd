"""What a probe generator returns and how generators are registered by family."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins


@dataclass
class Probe:
    """One rendered stimulus with its question and the ground truth computed from what was drawn."""

    image: Image.Image
    question: str
    answer: str  # 'yes'/'no' for illusions; a count, letter or word for BlindTest-style tasks
    family: str
    category: str  # size, colour, line length, straightness, alignment, parallelism, boundary, or a task name
    magnitude: float  # how far the counterfactual departs from the genuine illusion (0 for genuine)
    counterfactual: bool
    params: dict[str, Any] = field(default_factory=dict)  # every parameter needed to redraw it
    choices: list[str] | None = None


# make(rng, size, counterfactual, magnitude) -> Probe; must draw only from `rng` so seeds reproduce bytes.
Maker = Callable[[np.random.Generator, int, bool, float], Probe]


@dataclass(frozen=True)
class Family:
    name: str
    suite: str  # 'illusions' or 'blindtest'
    category: str
    description: str
    make: Maker
    magnitudes: tuple[float, ...] = (1.0,)  # graded counterfactual strengths, weakest first
    unit: str = ""  # what a magnitude measures, for a plot's axis ("degrees between neighbouring lines")


FAMILIES: dict[str, Family] = {}  # the built-in families, filled by @family as their modules are imported


@hookimpl
def register_probe_families(register):
    """The built-in families, registered as a plugin's are."""
    for name, built_in in FAMILIES.items():
        register(name, built_in)


def registered_families() -> dict[str, Family]:
    """Every family the built-ins and the installed plugins register; a name two register is refused."""
    return dict(default_plugins().registry("register_probe_families", "probe family"))


def family(name: str, suite: str, category: str, description: str,
           magnitudes: tuple[float, ...] = (1.0,), unit: str = "") -> Callable[[Maker], Maker]:
    """Register a generator under a family name."""

    def decorate(make: Maker) -> Maker:
        if name in FAMILIES:
            raise ValueError(f"probe family {name!r} registered twice")
        FAMILIES[name] = Family(name, suite, category, description, make, magnitudes, unit)
        return make

    return decorate
