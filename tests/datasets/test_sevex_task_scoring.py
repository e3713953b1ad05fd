"""SEVEX tasks read answers with the shared extractor and pick their samples from real BLINK and HF files."""

from __future__ import annotations

import pytest

from trompe_agents.datasets import load_dataset
from trompe_agents.datasets.base import Sample
from trompe_agents.sevex.tasks import get_task
from trompe_agents.testing import dataset_files as files


def sample(answer, choices=None, category=None, error=None) -> Sample:
    return Sample(id=f"{category}-{answer}", images=[], question="q?", answer=answer, choices=choices,
                  category=category, error=error)


@pytest.mark.parametrize("reply, right", [("(B)", True), ("Option B", True), ("The answer is (A).", False),
                                          ("The correct answer is a bit unclear ... (B)", True)])
def test_custom_task_with_options_reads_option_letters(reply, right):
    """A custom task's gold 'B' on a sample with options is option B, not a BlindTest circled letter."""
    task = get_task("Floors", "Which description fits the floor?")
    prediction, correct = task.score(reply, sample("B", ["flat", "painted", "curved"]))
    assert correct is right and prediction == ("B" if right else "A")


def test_custom_task_without_options_keeps_the_gold_answers_shape():
    task = get_task("Counts", "How many squares?")
    assert task.score("I count {4}.", sample("4")) == ("4", True)
    assert task.score("{O}", sample("o"))[1]  # a circled letter compares without case


def test_blink_subtask_filter_accepts_spaces_or_underscores(tmp_path):
    snap = files.write_blink_snapshot(tmp_path / "blink", 6)
    samples = list(load_dataset(snap, images_root=tmp_path / "c"))
    spaced = [sample(s.answer, s.choices, s.category.replace("_", " ")) for s in samples]
    assert len(get_task("Relative_Depth").samples(spaced)) == 2
    assert len(get_task("Relative_Depth").samples(samples)) == 2


def test_unlabelled_and_broken_samples_are_dropped_from_dev_and_apply(tmp_path):
    test_split = list(load_dataset(files.write_blink_snapshot(tmp_path / "b", 3), split="test",
                                   images_root=tmp_path / "c"))
    assert test_split and get_task("Jigsaw").samples(test_split) == []
    mixed = [sample("yes", category="size"), sample(None, category="size"), sample("no", error="image missing")]
    assert [s.answer for s in get_task("probes").samples(mixed)] == ["yes"]
