"""Parametric generators for classic visual illusions; importing this package registers every family.

Each family draws the genuine illusion (the physical answer is the one the illusion hides) or a counterfactual
whose physical answer is flipped by a graded `magnitude`; the answer is computed from what was drawn.
"""

from trompe_agents.probes.illusions import (  # noqa: F401  (imported to register their families)
    alignment,
    boundary,
    colour,
    lines,
    parallelism,
    size,
    straightness,
)
