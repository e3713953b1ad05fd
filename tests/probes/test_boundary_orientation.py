"""The boundary family in both orientations: the same seed draws the same staircase, turned a quarter."""

from __future__ import annotations

import numpy as np
import pytest

import trompe_agents.probes.illusions  # noqa: F401  (registers the families)
from trompe_agents.probes.base import FAMILIES


def make(name: str, seed: int, counterfactual: bool = False, magnitude: float = 0.0):
    return FAMILIES[name].make(np.random.default_rng(seed), 256, counterfactual, magnitude)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("counterfactual, magnitude", [(False, 0.0), (True, 1.0), (True, 2.0)])
def test_horizontal_staircase_is_the_vertical_one_turned(seed, counterfactual, magnitude):
    vertical = make("chevreul", seed, counterfactual, magnitude)
    horizontal = make("chevreul_horizontal", seed, counterfactual, magnitude)
    v, h = np.asarray(vertical.image.convert("L")), np.asarray(horizontal.image.convert("L"))
    assert h.shape == v.shape[::-1] and np.array_equal(h, v.T)
    assert horizontal.answer == vertical.answer
    assert horizontal.params["merged_pairs"] == vertical.params["merged_pairs"]
    assert (horizontal.params["orientation"], vertical.params["orientation"]) == ("horizontal", "vertical")


def test_horizontal_questions_name_horizontal_strips_of_equal_height():
    questions = {make("chevreul_horizontal", seed).question for seed in range(12)}
    assert all("horizontal strips" in q and "height" in q and "vertical" not in q for q in questions)
    probe = make("chevreul_horizontal", 0)
    pixels = np.asarray(probe.image.convert("L"))[:, : probe.params["band_height"]]
    assert all(len(set(row)) == 1 for row in pixels)  # flat along each strip, left to right
    assert sorted(set(pixels[:, 0])) == sorted(probe.params["values"])  # the shades change top to bottom


def test_horizontal_family_is_a_boundary_illusion_with_the_same_magnitudes():
    family, vertical = FAMILIES["chevreul_horizontal"], FAMILIES["chevreul"]
    assert family.category == "boundary" and family.suite == "illusions"
    assert family.magnitudes == vertical.magnitudes
