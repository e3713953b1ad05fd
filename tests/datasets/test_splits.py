"""Which files of a Hugging Face snapshot hold which split, and the default evaluation split per benchmark."""

from __future__ import annotations

from pathlib import Path

import pytest

from trompe_agents.datasets import DatasetError
from trompe_agents.datasets.splits import pick_split, split_of


@pytest.mark.parametrize("path, split", [
    ("data/test-00000-of-00001.parquet", "test"),          # csebuetnlp/illusionVQA-Comprehension
    ("Jigsaw/val-00000-of-00001.parquet", "val"),          # BLINK-Benchmark/BLINK
    ("data/non_image-00000-of-00001.parquet", "non_image"),  # lmms-lab/HallusionBench
    ("default/select/0000.parquet", "select"),             # refs/convert/parquet layout
    ("valid.parquet", None),
])
def test_split_of_a_file(path, split):
    assert split_of(Path(path)) == split


def test_default_split_is_the_labelled_one_and_a_missing_split_lists_the_others():
    files = [Path("J/test-00000-of-00001.parquet"), Path("J/val-00000-of-00001.parquet")]
    assert pick_split(files, None, "val", Path("J")) == ([files[1]], "val")
    assert pick_split(files, "all", "val", Path("J")) == (files, "all")
    with pytest.raises(DatasetError, match=r"--split: J has no split 'train'; its splits: test, val \(or 'all'\)"):
        pick_split(files, "train", "val", Path("J"))
    only = [Path("x/test-00000-of-00001.parquet")]
    assert pick_split(only, None, "val", Path("x")) == (only, "test")  # one split: that one
