"""Label files join answers onto unlabelled sets; every mismatch is an error naming the id or column."""

from __future__ import annotations

import json

import pytest

from trompe_agents.datasets import DatasetError, load_dataset
from trompe_agents.datasets.labels import read_labels
from trompe_agents.testing import dataset_files as files


@pytest.mark.parametrize("name, text", [
    ("labels.json", json.dumps({"0": "1", "2": "0"})),
    ("labels.json", json.dumps([{"id": 0, "answer": "yes"}, {"id": 2, "answer": "No"}])),
    ("labels.jsonl", '{"index": 0, "label": 1}\n{"index": 2, "label": 0}\n'),
    ("labels.csv", "id,answer\n0,<answer>1</answer>\n2,0\n"),
    ("labels.txt", "0 1\n2 0\n"),
])
def test_every_label_file_shape_joins_the_same_answers(tmp_path, name, text):
    data = files.write_datacv1(tmp_path, 3)
    (tmp_path / name).write_text(text)
    assert [s.answer for s in load_dataset(data, labels=tmp_path / name)] == ["yes", None, "no"]


def test_label_for_an_unknown_id_is_named(tmp_path):
    data = files.write_datacv1(tmp_path, 2)
    (tmp_path / "labels.txt").write_text("0 1\n7 0\n")
    with pytest.raises(DatasetError, match="label id '7' matches no sample"):
        load_dataset(data, labels=tmp_path / "labels.txt")


def test_invalid_label_value_is_named(tmp_path):
    data = files.write_datacv1(tmp_path, 2)
    (tmp_path / "labels.txt").write_text("1 maybe\n")
    with pytest.raises(DatasetError, match="id '1': label 'maybe' is not a datacv1 answer"):
        load_dataset(data, labels=tmp_path / "labels.txt")


def test_label_file_without_an_answer_column_or_file(tmp_path):
    (tmp_path / "l.csv").write_text("id,guess\n0,1\n")
    with pytest.raises(DatasetError, match="missing an answer column"):
        read_labels(tmp_path / "l.csv")
    with pytest.raises(DatasetError, match="labels: file not found"):
        read_labels(tmp_path / "none.csv")
    (tmp_path / "l.txt").write_text("0 1\n5\n")
    with pytest.raises(DatasetError, match="line 2: expected '<id> <answer>'"):
        read_labels(tmp_path / "l.txt")


def test_labels_override_blindtest_style_answers_in_a_probe_set(tmp_path):
    data = files.write_generic(tmp_path, 2)
    (tmp_path / "l.json").write_text(json.dumps({"s0": "{3}", "s1": "rows={2} columns={5}"}))
    assert [s.answer for s in load_dataset(data, labels=tmp_path / "l.json")] == ["3", "2,5"]
