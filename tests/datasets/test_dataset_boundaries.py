"""A dataset names images only inside its own folders: a path that resolves elsewhere (absolute, climbing with
`..`, a link out) is refused unless the user says otherwise; embedded images are files of their own content, so
ids that read alike as file names never share one; a repeated TSV index is refused.

No rerun as `nobody`: each refusal is decided from the resolved path before the file is opened, and root, who may
read every file, is the case where a permission error could not stand in for a missing refusal."""

from __future__ import annotations

import base64
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from trompe_agents.datasets.base import DatasetError
from trompe_agents.datasets.load import load_dataset
from trompe_agents.testing.dataset_files import png_bytes


def jsonl(folder: Path, image: str) -> Path:
    """A generic-format file with one sample naming `image` (trompe's own format, datasets/jsonl.py)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "data.jsonl"
    path.write_text(json.dumps({"id": "s0", "images": [image], "question": "Equal?", "answer": "yes"}) + "\n")
    return path


@pytest.fixture
def secret(tmp_path) -> Path:
    """A readable image outside the dataset's folder: what an attacker's dataset file would point at."""
    path = tmp_path / "private" / "holiday.png"
    path.parent.mkdir()
    path.write_bytes(png_bytes(7))
    return path


def named_outside(folder: Path, secret: Path, how: str) -> Path:
    """A dataset in `folder` whose one image leads to `secret` the way `how` says."""
    if how == "absolute":
        return jsonl(folder, str(secret))
    if how == "climbing":
        return jsonl(folder, "../private/holiday.png")
    folder.mkdir()
    (folder / "images").symlink_to(secret.parent)
    return jsonl(folder, "images/holiday.png")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("how", ["absolute", "climbing", "link"])
def test_an_image_outside_the_dataset_is_refused_naming_it_and_the_flag(tmp_path, secret, how, stream):
    path = named_outside(tmp_path / "data", secret, how)
    with pytest.raises(DatasetError, match=rf"sample 's0': image .* resolves to {secret}, outside the dataset's "
                                           r"folders .*pass --allow-images-outside to read images from anywhere"):
        load_dataset(path, stream=stream)
    assert [s.images for s in load_dataset(path, stream=stream, images_anywhere=True)] == [[secret]]


def test_images_under_images_root_are_read(tmp_path, secret):
    path = jsonl(tmp_path / "data", "holiday.png")
    assert load_dataset(path, images_root=secret.parent).samples[0].images == [secret]


def test_the_command_line_refuses_with_one_line_and_reads_with_the_flag(tmp_path, secret):
    path = named_outside(tmp_path / "data", secret, "climbing")
    command = [sys.executable, "-m", "trompe_agents.cli", "dataset", "info", str(path)]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "--allow-images-outside" in refused.stderr
    read = subprocess.run([*command, "--allow-images-outside"], capture_output=True, text=True, timeout=120)
    assert read.returncode == 0, read.stderr


def vlmevalkit_tsv(path: Path, indices: list[str]) -> Path:
    """A VLMEvalKit TSV (open-compass/VLMEvalKit vlmeval/dataset/image_base.py at e8e78f0: `index, image,
    question, answer`, tab-separated, the image base64), row k holding its own picture png_bytes(k)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter="\t")
        writer.writerow(["index", "image", "question", "answer"])
        for k, index in enumerate(indices):
            writer.writerow([index, base64.b64encode(png_bytes(k)).decode(), f"Is this picture {k}?", "Yes"])
    return path


def test_tsv_indices_that_read_alike_as_file_names_keep_their_own_images(tmp_path):
    indices = ["cat dog", "cat_dog", "cat/dog"]
    data = load_dataset(vlmevalkit_tsv(tmp_path / "b.tsv", indices), images_root=tmp_path / "img")
    assert [s.id for s in data.samples] == indices
    assert [s.images[0].read_bytes() for s in data.samples] == [png_bytes(k) for k in range(3)]


def test_a_repeated_tsv_index_is_refused_naming_both_lines(tmp_path):
    path = vlmevalkit_tsv(tmp_path / "b.tsv", ["1", "2", "1"])
    with pytest.raises(DatasetError, match=r"b.tsv: line 4: index '1' repeats line 2's"):
        load_dataset(path, images_root=tmp_path / "img")
