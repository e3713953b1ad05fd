"""VLMEvalKit TSV files load as a dataset and run through `illusion-agent run` (tests/datasets/replicas.py
writes the layout of vlmeval/dataset/image_base.py at e8e78f0)."""

from __future__ import annotations


import pytest

from trompe_agents.datasets.base import DatasetError
from trompe_agents.datasets.load import detect_format, load_dataset
from trompe_agents.illusion.cli import main as illusion_agent
from runlines import written

from replicas import write_vlmevalkit_tsv


def test_tsv_rows_become_samples_with_their_options_images_and_hint(tmp_path):
    path = write_vlmevalkit_tsv(tmp_path / "MyBench.tsv", 4)
    assert detect_format(path) == "vlmevalkit"
    data = load_dataset(path, images_root=tmp_path / "img")
    first, second, third = data.samples[:3]
    assert first.choices == ["red", "green", "blue", "grey"] and first.answer == "A"
    assert second.choices == ["left", "right"] and second.answer == "B" and second.category == "position"
    assert first.question.startswith("Hint: Look closely.\nWhich colour") and "Hint" not in second.question
    assert third.images[0].read_bytes() == second.images[0].read_bytes()  # row 2 names row 1's image
    assert first.images[0].read_bytes().startswith(b"\x89PNG")


def test_bad_image_data_names_the_row(tmp_path):
    path = write_vlmevalkit_tsv(tmp_path / "b.tsv", 1)
    text = path.read_text().splitlines()
    fields = text[1].split("\t")
    fields[1] = "not*base64"
    path.write_text("\n".join([text[0], "\t".join(fields)]) + "\n")
    with pytest.raises(DatasetError, match=r"b.tsv: line 2 \(index '0'\): 'image' is not base64"):
        load_dataset(path, images_root=tmp_path / "img")


def test_a_tsv_runs_through_illusion_agent(tmp_path, scripted_on_path):
    path = write_vlmevalkit_tsv(tmp_path / "MyBench.tsv", 4)
    out = tmp_path / "run"
    assert illusion_agent(["run", "--dataset", str(path), "--images-root", str(tmp_path / "img"), "--out",
                           str(out), "--backend", "function", "--no-progress",
                           "--model", "scripted_answers:always_b"]) == 0
    records = written(out)
    assert {k: r["correct"] for k, r in records.items()} == {"0": False, "1": True, "2": False, "3": True}
    assert records["1"]["answer_type"] == "choice:2"
