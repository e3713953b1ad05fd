"""Label rows join on id and content: a row naming another question or image is reported and never joined."""

from __future__ import annotations

import csv
import hashlib

import pytest

from trompe_agents.datasets import DatasetError, load_dataset
from trompe_agents.datasets.cliargs import describe_counts
from trompe_agents.testing import dataset_files as files


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_labels(path, rows: list[dict]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_a_row_with_another_image_hash_is_counted_and_leaves_its_sample_unlabelled(tmp_path):
    data = files.write_datacv1(tmp_path, 3)
    samples = list(load_dataset(data))
    images = [s.images[0] for s in samples]
    write_labels(tmp_path / "labels.csv", [
        {"id": 0, "answer": 1, "image_sha256": sha(images[0])},  # the full digest
        {"id": 1, "answer": 0, "image_sha256": sha(images[1])[:12].upper()},  # a prefix, either case
        {"id": 2, "answer": 1, "image_sha256": sha(images[0])}])  # image 0's hash on item 2: another image
    dataset = load_dataset(data, labels=tmp_path / "labels.csv")
    assert [s.answer for s in dataset] == ["yes", "no", None]
    assert dataset.counts["label_mismatch"] == 1
    assert "1 whose label row holds another question or image (not joined)" in describe_counts(dataset)


def test_a_row_with_another_question_is_not_joined_and_whitespace_does_not_count(tmp_path):
    data = files.write_generic(tmp_path, 2)
    samples = list(load_dataset(data, labels=None))
    write_labels(tmp_path / "labels.csv", [
        {"id": samples[0].id, "answer": "no", "question": "  " + samples[0].question.replace(" ", "\n ") + " "},
        {"id": samples[1].id, "answer": "no", "question": samples[1].question + " (another version)"}])
    dataset = load_dataset(data, labels=tmp_path / "labels.csv")
    assert [s.answer for s in dataset] == ["no", samples[1].answer]  # the second keeps the set's own answer
    assert dataset.counts["label_mismatch"] == 1


def test_a_label_file_whose_rows_all_differ_is_refused_naming_one(tmp_path):
    data = files.write_datacv1(tmp_path, 2)
    write_labels(tmp_path / "labels.csv", [{"id": i, "answer": 1, "image_sha256": "0" * 64} for i in range(2)])
    with pytest.raises(DatasetError, match=r"no label row matches its sample's content \(id '0': another "
                                           r"image_sha256\); the file labels another version"):
        load_dataset(data, labels=tmp_path / "labels.csv")


@pytest.mark.parametrize("value", ["not-hex", "abc"])  # never a match by accident: 8+ hex digits or nothing
def test_a_hash_too_short_or_not_hex_never_matches(tmp_path, value):
    data = files.write_datacv1(tmp_path, 2)
    write_labels(tmp_path / "labels.csv", [{"id": 0, "answer": 1, "image_sha256": value},
                                           {"id": 1, "answer": 0, "image_sha256": ""}])  # blank: not given
    dataset = load_dataset(data, labels=tmp_path / "labels.csv")
    assert [s.answer for s in dataset] == [None, "no"] and dataset.counts["label_mismatch"] == 1
