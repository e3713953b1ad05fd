"""The illusion families keep the Probe contract: registered, deterministic, sized, labelled and redrawable."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

import trompe_agents.probes.illusions  # noqa: F401  (registers the families)
from trompe_agents.probes.base import FAMILIES

ILLUSIONS = sorted(n for n, f in FAMILIES.items() if f.suite == "illusions")
CATEGORIES = {"size", "colour", "line length", "straightness", "alignment", "parallelism", "boundary"}
REQUIRED = {"ebbinghaus", "delboeuf", "muller_lyer", "muller_lyer_markers", "ponzo", "hering", "wundt",
            "poggendorff", "zollner", "cafe_wall", "orbison", "simultaneous_contrast", "whites", "cornsweet",
            "chevreul", "irradiation", "colour_circles"}


def png(probe) -> bytes:
    buf = io.BytesIO()
    probe.image.save(buf, format="PNG")
    return buf.getvalue()


def make(name, seed=0, size=256, counterfactual=False, magnitude=0.0):
    return FAMILIES[name].make(np.random.default_rng(seed), size, counterfactual, magnitude)


def test_all_classic_illusions_are_registered_with_a_known_category():
    assert REQUIRED <= set(ILLUSIONS)
    for name in ILLUSIONS:
        family = FAMILIES[name]
        assert family.category in CATEGORIES
        assert family.magnitudes == tuple(sorted(family.magnitudes)) and family.magnitudes[0] > 0
        assert family.description


@pytest.mark.parametrize("name", ILLUSIONS)
def test_every_magnitude_gives_a_valid_probe(name):
    family = FAMILIES[name]
    for counterfactual, magnitude in [(False, 0.0)] + [(True, m) for m in family.magnitudes]:
        probe = make(name, 3, 300, counterfactual, magnitude)
        assert probe.image.mode == "RGB" and max(probe.image.size) == 300
        assert (probe.params["width"], probe.params["height"]) == probe.image.size
        assert probe.family == name and probe.category == family.category
        assert probe.counterfactual is counterfactual and probe.magnitude == magnitude
        assert probe.answer in ("yes", "no")
        assert probe.question.endswith("?") and "{" not in probe.question
        json.dumps(probe.params)  # every parameter can be written next to the image


@pytest.mark.parametrize("name", ILLUSIONS)
def test_same_seed_same_bytes_other_seed_other_bytes(name):
    first, again = png(make(name, 11, counterfactual=True, magnitude=FAMILIES[name].magnitudes[0])), png(
        make(name, 11, counterfactual=True, magnitude=FAMILIES[name].magnitudes[0]))
    assert first == again
    assert png(make(name, 11)) != png(make(name, 12))
    assert make(name, 11).params == make(name, 11).params


@pytest.mark.parametrize("name", ILLUSIONS)
def test_phrasing_and_polarity_vary_with_the_seed(name):
    """Yes is not always the genuine answer, and people ask in more than one way."""
    genuine = [make(name, seed, 128) for seed in range(24)]
    assert {p.answer for p in genuine} == {"yes", "no"}
    assert len({p.question for p in genuine}) >= 3


@pytest.mark.parametrize("name", ILLUSIONS)
def test_counterfactual_outside_the_graded_range_is_refused(name):
    family = FAMILIES[name]
    for bad in (0.0, -family.magnitudes[0], family.magnitudes[-1] * 10):
        with pytest.raises(ValueError, match=rf"magnitude for {name} must be in \(0, "):
            make(name, counterfactual=True, magnitude=bad)


def test_genuine_probe_ignores_magnitude_and_records_zero():
    probe = make("ebbinghaus", 5, counterfactual=False, magnitude=0.3)
    assert probe.magnitude == 0.0
    assert png(probe) == png(make("ebbinghaus", 5))


def test_compared_colours_are_exact_after_png_round_trip():
    """Flat compared regions keep their exact value through PNG; antialiasing touches only edges."""
    probe = make("simultaneous_contrast", 4)
    decoded = np.asarray(Image.open(io.BytesIO(png(probe))))
    for (x0, y0, x1, y1), level in zip(probe.params["boxes"], probe.params["levels"]):
        assert (decoded[y0:y1, x0:x1] == level).all()
