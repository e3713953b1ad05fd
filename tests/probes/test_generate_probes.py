"""generate(): reproducible bytes, round-robin families, genuine/counterfactual balance, JPEG, read-back."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from trompe_agents.datasets import load_dataset
from trompe_agents.probes import FAMILIES, Probe, family, generate, list_families
from trompe_agents.probes.generate import is_counterfactual

TOY = "toy_bars_for_tests"


@pytest.fixture
def toy_illusion():
    """A minimal illusion family (two bars, equal unless counterfactual) to exercise the illusion options."""

    @family(TOY, "illusions", "line length", "two bars; equal unless counterfactual", magnitudes=(0.1, 0.2, 0.3))
    def make(rng, size, counterfactual, magnitude):
        im = Image.new("L", (size, size), 255)
        top = int(rng.integers(size // 4, size // 2))
        bottom = int(top * (1 + magnitude)) if counterfactual else top
        draw = ImageDraw.Draw(im)
        draw.line((10, 20, 10 + top, 20), fill=0, width=3)
        draw.line((10, 60, 10 + bottom, 60), fill=0, width=3)
        return Probe(im, "Are the two bars the same length?", "no" if counterfactual else "yes", TOY,
                     "line length", magnitude if counterfactual else 0.0, counterfactual,
                     {"top": top, "bottom": bottom})

    yield TOY
    del FAMILIES[TOY]


def digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_same_seed_gives_identical_bytes_and_other_seeds_differ(tmp_path):
    generate("blindtest", n=12, seed=5, size=160, out=tmp_path / "a", progress=False)
    generate("blindtest", n=12, seed=5, size=160, out=tmp_path / "b", progress=False)
    generate("blindtest", n=12, seed=6, size=160, out=tmp_path / "c", progress=False)
    a, b, c = digest(tmp_path / "a"), digest(tmp_path / "b"), digest(tmp_path / "c")
    assert a == b
    assert len(a) == 13  # 12 images + probes.jsonl
    assert len(set(a.values()) & set(c.values())) <= 1  # another seed: other bytes (a rare image may repeat)


def test_ids_carry_suite_seed_index_family_and_image_hash_so_two_seeds_never_share_one(tmp_path):
    seed1 = generate("illusions", families=["ebbinghaus"], n=3, seed=1, size=96, out=tmp_path / "a", progress=False)
    seed7 = generate("illusions", families=["ebbinghaus"], n=3, seed=7, size=96, out=tmp_path / "b", progress=False)
    again = generate("illusions", families=["ebbinghaus"], n=3, seed=1, size=96, out=tmp_path / "c", progress=False)
    bigger = generate("illusions", families=["ebbinghaus"], n=3, seed=1, size=128, out=tmp_path / "d",
                      progress=False)
    first = seed1[0]
    digest8 = hashlib.sha256(first.images[0].read_bytes()).hexdigest()[:8]
    assert first.id == f"illusions-s1-00000-ebbinghaus-{digest8}" and first.images[0].stem == first.id
    assert [s.id for s in again] == [s.id for s in seed1]  # same seed and settings: the same ids
    assert not {s.id for s in seed1} & ({s.id for s in seed7} | {s.id for s in bigger})


def test_sample_depends_only_on_seed_and_index(tmp_path):
    """Generating more samples (or fewer families) never changes the ones already made."""
    short = generate("blindtest", n=6, seed=3, size=160, out=tmp_path / "s", progress=False)
    long = generate("blindtest", n=18, seed=3, size=160, out=tmp_path / "l", progress=False)
    for s, t in zip(short, long, strict=False):
        assert s.images[0].read_bytes() == t.images[0].read_bytes()


def test_round_robin_over_chosen_families(tmp_path):
    chosen = ["nested_squares", "line_intersections"]
    samples = generate("blindtest", chosen, n=5, seed=0, size=160, out=tmp_path, progress=False)
    assert [s.metadata["family"] for s in samples] == chosen * 2 + chosen[:1]
    assert all(s.images[0].suffix == ".png" and s.images[0].is_file() for s in samples)


def test_balance_is_the_share_of_genuine_probes_and_magnitudes_cycle(tmp_path, toy_illusion):
    samples = generate("illusions", [toy_illusion], n=24, seed=1, size=96, balance=0.25, out=tmp_path,
                       progress=False)
    flags = [s.metadata["counterfactual"] for s in samples]
    assert flags.count(False) == 6 and flags.count(True) == 18
    assert all(s.answer == ("no" if s.metadata["counterfactual"] else "yes") for s in samples)
    # measured: counterfactual bars really differ in length, genuine ones do not
    for s in samples:
        ink = np.asarray(Image.open(s.images[0])) < 128
        top, bottom = ink[18:23].any(axis=0).sum(), ink[58:63].any(axis=0).sum()
        assert (top != bottom) == s.metadata["counterfactual"]
    cf_magnitudes = Counter(s.metadata["magnitude"] for s in samples if s.metadata["counterfactual"])
    assert cf_magnitudes == {0.1: 6, 0.2: 6, 0.3: 6}


@pytest.mark.parametrize("balance", [0.0, 0.3, 0.5, 1.0])
def test_every_prefix_is_balanced(balance):
    flags = [is_counterfactual(k, balance) for k in range(40)]
    for end in range(1, 41):
        assert abs(flags[:end].count(False) - balance * end) < 1


def test_jpeg_changes_bytes_never_labels(tmp_path):
    png = generate("blindtest", n=6, seed=2, size=192, out=tmp_path / "png", progress=False)
    jpg = generate("blindtest", n=6, seed=2, size=192, jpeg_quality=40, out=tmp_path / "jpg", progress=False)
    for p, j in zip(png, jpg, strict=True):
        assert j.images[0].suffix == ".jpg" and Image.open(j.images[0]).format == "JPEG"
        assert p.images[0].read_bytes() != j.images[0].read_bytes()
        assert (p.answer, p.question, p.metadata["params"]) == (j.answer, j.question, j.metadata["params"])
        assert j.metadata["jpeg_quality"] == 40
        diff = np.abs(np.asarray(Image.open(p.images[0]), int) - np.asarray(Image.open(j.images[0]).convert("RGB"),
                                                                           int))
        assert 0 < diff.mean() < 20  # compression artefacts, same picture


def test_written_set_reads_back_identically(tmp_path):
    samples = generate("blindtest", n=7, seed=9, size=160, out=tmp_path, progress=False)
    assert list(load_dataset(tmp_path)) == samples
    assert list(load_dataset(tmp_path / "probes.jsonl", format="jsonl")) == samples


@pytest.mark.parametrize("kwargs, word", [
    ({"n": 0}, "n:"), ({"size": 10}, "size:"), ({"balance": 1.5}, "balance:"), ({"jpeg_quality": 0}, "jpeg_quality:"),
    ({"families": ["no_such_family"]}, "no_such_family"), ({"suite": "other"}, "suite:"),
])
def test_bad_arguments_name_the_argument(tmp_path, kwargs, word):
    args = {"suite": "blindtest", "n": 2, "size": 128, "out": tmp_path, "progress": False} | kwargs
    with pytest.raises(ValueError, match=word):
        generate(**args)
    assert not (tmp_path / "probes.jsonl").exists()


def test_a_family_of_another_suite_is_refused(tmp_path, toy_illusion):
    with pytest.raises(ValueError, match=toy_illusion):
        generate("blindtest", [toy_illusion], n=1, out=tmp_path, progress=False)
    assert toy_illusion in [f.name for f in list_families("illusions")]
    assert toy_illusion not in [f.name for f in list_families("blindtest")]


def test_registered_illusion_families_generate_balanced_sets(tmp_path):
    real = [f.name for f in list_families("illusions")]
    if not real:
        pytest.skip("no illusion families registered in this checkout")
    samples = generate("illusions", real, n=2 * len(real), seed=0, size=256, out=tmp_path, progress=False)
    for name in real:
        flags = [s.metadata["counterfactual"] for s in samples if s.metadata["family"] == name]
        assert sorted(flags) == [False, True], name
