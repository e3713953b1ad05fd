"""Every illusion family's answer agrees with what an independent measurement of its pixels says."""

from __future__ import annotations

import numpy as np
import pytest
from illusion_pixels import MEASURE, expected_answer

import trompe_agents.probes.illusions  # noqa: F401  (registers the families)
from trompe_agents.probes.base import FAMILIES

CASES = [(name, counterfactual, magnitude)
         for name in sorted(MEASURE)
         for counterfactual, magnitude in [(False, 0.0)] + [(True, m) for m in FAMILIES[name].magnitudes]]


def departure_tolerance(magnitude: float) -> float:
    """Pixels blur sizes by a fraction of a pixel: allow 25% of the step (5% of a whole merged strip)."""
    return 0.25 * magnitude + 0.005


def test_every_illusion_family_is_measured():
    illusions = {n for n, f in FAMILIES.items() if f.suite == "illusions"}
    assert illusions == set(MEASURE)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("name", "counterfactual", "magnitude"), CASES)
def test_answer_matches_measured_pixels(name, counterfactual, magnitude, seed):
    probe = FAMILIES[name].make(np.random.default_rng(seed), 256, counterfactual, magnitude)
    measured = MEASURE[name](probe)

    assert probe.answer == expected_answer(probe, measured), (probe.question, measured)
    if counterfactual:
        assert abs(measured.departure - magnitude) <= departure_tolerance(magnitude), measured
    else:
        # the genuine illusion: what the question compares really is equal / straight / aligned / parallel
        assert measured.departure <= (0.05 if FAMILIES[name].category == "parallelism" else 0.004), measured


@pytest.mark.parametrize("name", sorted(MEASURE))
def test_counterfactual_flips_the_physical_answer(name):
    """Same seed: the counterfactual keeps layout and question, and only the manipulated feature flips."""
    family = FAMILIES[name]
    genuine = family.make(np.random.default_rng(7), 256, False, 0.0)
    flipped = family.make(np.random.default_rng(7), 256, True, family.magnitudes[-1])
    assert genuine.question == flipped.question
    assert genuine.params["ask"] == flipped.params["ask"]
    g, f = MEASURE[name](genuine), MEASURE[name](flipped)
    if g.holds is not None:
        assert g.holds and not f.holds
    else:
        assert g.departure < 0.01 < f.departure
    if genuine.params["ask"]["form"] != "more":
        assert genuine.answer != flipped.answer
