"""Property tests: for any seed, size and magnitude in range, the answer agrees with the measured pixels."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from illusion_pixels import MEASURE, expected_answer

import trompe_agents.probes.illusions  # noqa: F401  (registers the families)
from trompe_agents.probes.base import FAMILIES

SAMPLED = ["ebbinghaus", "muller_lyer", "hering", "poggendorff", "zollner", "whites"]


@st.composite
def stimuli(draw):
    name = draw(st.sampled_from(SAMPLED))
    steps = FAMILIES[name].magnitudes
    counterfactual = draw(st.booleans())
    magnitude = draw(st.floats(steps[0], steps[-1])) if counterfactual else 0.0
    return name, draw(st.integers(0, 2**32 - 1)), draw(st.integers(200, 400)), counterfactual, magnitude


@settings(max_examples=60, deadline=None)
@given(stimuli())
def test_answer_agrees_with_measurement(stimulus):
    name, seed, size, counterfactual, magnitude = stimulus
    probe = FAMILIES[name].make(np.random.default_rng(seed), size, counterfactual, magnitude)
    measured = MEASURE[name](probe)
    assert probe.answer == expected_answer(probe, measured)
    assert max(probe.image.size) == size
    if counterfactual:
        assert abs(measured.departure - magnitude) <= 0.25 * magnitude + 0.005


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(MEASURE)), st.integers(0, 2**32 - 1))
def test_genuine_illusion_is_physically_what_the_illusion_hides(name, seed):
    """Genuine probes really are equal, straight, aligned or parallel, whatever the seed."""
    probe = FAMILIES[name].make(np.random.default_rng(seed), 256, False, 0.0)
    measured = MEASURE[name](probe)
    assert measured.holds is True if measured.holds is not None else measured.departure < 0.01
    assert probe.answer == expected_answer(probe, measured)
