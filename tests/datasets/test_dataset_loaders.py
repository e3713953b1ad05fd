"""Each loader against small files written in the benchmark's real format, well-formed and malformed."""

from __future__ import annotations

import csv
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trompe_agents.datasets import DatasetError, detect_format, load_dataset
from trompe_agents.testing import dataset_files as files


def rewrite_parquet(path, change):
    """Apply `change(rows)` to a parquet file's rows and write it back with the same schema."""
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def drop_column(path, name):
    table = pq.read_table(path)
    pq.write_table(table.drop_columns([name]), path)


# ---------------------------------------------------------------- generic JSONL

def test_generic_jsonl_reads_every_field(tmp_path):
    path = files.write_generic(tmp_path, 3)
    samples = list(load_dataset(path))
    assert [s.id for s in samples] == ["s0", "s1", "s2"]
    assert samples[1].answer == "yes" and samples[1].category == "size" and samples[1].metadata == {"i": 1}
    assert samples[2].images == [(tmp_path / "images" / "s2.png").resolve()]
    assert samples[2].images[0].read_bytes() == files.png_bytes(2)


def test_generic_jsonl_missing_image_names_the_line_id_and_file(tmp_path):
    path = files.write_generic(tmp_path, 3)
    (tmp_path / "images" / "s1.png").unlink()
    with pytest.raises(DatasetError, match=r"line 2 \(id 's1'\), image: file not found: .*s1\.png"):
        load_dataset(path)


def test_generic_jsonl_missing_field_names_it(tmp_path):
    path = files.write_generic(tmp_path, 2)
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    del row["question"]
    path.write_text(lines[0] + "\n" + json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match="line 2: missing field 'question'"):
        load_dataset(path)


@pytest.mark.parametrize("line, message", [
    ('5', "line 2: expected a JSON object, got int"),
    ('{"id": null, "images": ["images/s0.png"], "question": "q?"}', "line 2: field 'id' has the wrong type"),
    ('{"id": "x", "images": ["images/s0.png"], "question": null}', "line 2: field 'question' has the wrong type"),
    ('{"id": "x", "images": [5], "question": "q?"}', "line 2: 'images' must be a non-empty list of paths"),
    ('{"id": "x", "images": ["images/s0.png"], "question": "q?", "metadata": [1]}',
     "line 2: field 'metadata' has the wrong type"),
    ('{"id": "x", "images": ["images/s0.png"], "question": "q?", "choices": "AB"}',
     "line 2: 'choices' must be a list of option texts"),
])
def test_generic_jsonl_malformed_row_names_the_line_and_field(tmp_path, line, message):
    path = files.write_generic(tmp_path, 1)
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(DatasetError, match=message):
        load_dataset(path)


def test_generic_jsonl_numeric_answer_is_read_as_text(tmp_path):
    path = files.write_generic(tmp_path, 1)
    path.write_text(path.read_text() + '{"id": 7, "images": ["images/s0.png"], "question": "q?", "answer": 3}\n')
    sample = list(load_dataset(path))[1]
    assert (sample.id, sample.answer) == ("7", "3")


def test_images_root_overrides_where_relative_paths_point(tmp_path):
    path = files.write_generic(tmp_path / "a", 2)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (tmp_path / "a" / "images").rename(moved / "images")
    with pytest.raises(DatasetError):
        load_dataset(path)
    assert load_dataset(path, images_root=moved).samples[0].images[0].parent == (moved / "images").resolve()


# ---------------------------------------------------------------- DataCV

def test_datacv_task1_has_no_answers_until_labels_are_joined(tmp_path):
    path = files.write_datacv1(tmp_path, 4)
    assert detect_format(path) == "datacv1"
    assert all(s.answer is None for s in load_dataset(path))
    labels = tmp_path / "labels.txt"
    labels.write_text("0 1\n1 0\n3 1\n")  # DataCV submission style: "<index> <answer>"
    answers = [s.answer for s in load_dataset(path, labels=labels)]
    assert answers == ["yes", "no", None, "yes"]


def test_datacv_task1_answer_column_is_normalised(tmp_path):
    samples = list(load_dataset(files.write_datacv1(tmp_path, 4, answers=True)))
    assert [s.answer for s in samples] == ["no", "yes", "no", "yes"]
    assert "<answer>" in samples[0].question


def test_datacv_task1_missing_image_fails_that_sample_only_and_missing_column_is_named(tmp_path):
    path = files.write_datacv1(tmp_path, 3)
    (tmp_path / "test" / "2.png").unlink()
    dataset = load_dataset(path)
    assert dataset.counts["missing_image"] == 1
    assert [s.error is None for s in dataset] == [True, True, False]
    assert "line 4 (index '2'), image_path: image file not found" in dataset.samples[2].error
    rows = list(csv.reader(path.open()))
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([r[:2] for r in rows])
    with pytest.raises(DatasetError, match="missing column 'prompt'"):
        load_dataset(path, format="datacv1")


def test_datacv_task2_parses_options_and_joins_index_labels(tmp_path):
    path = files.write_datacv2(tmp_path, 3)
    assert detect_format(path) == "datacv2"
    sample = load_dataset(path, images_root=tmp_path / "images").samples[0]
    assert sample.choices == ["6", "5", "4", "Not Sure"]
    assert sample.question.startswith("Question:\nHow many fingers")
    labels = tmp_path / "labels.csv"
    labels.write_text("index,answer\n0,2\n1,B\n2,(D)\n")  # 0-based indices, letters, or BLINK style
    assert [s.answer for s in load_dataset(path, labels=labels, images_root=tmp_path / "images")] == ["C", "B", "D"]


def test_datacv_task2_malformed_option_names_the_item(tmp_path):
    path = files.write_datacv2(tmp_path, 2)
    items = json.loads(path.read_text())
    items[1]["option"] = "Option: \nA. yes\nC. no"
    path.write_text(json.dumps(items))
    with pytest.raises(DatasetError, match=r"test.json: item 1 \(id '1'\): options must be lettered 'A. ...'"):
        load_dataset(path)
    del items[1]["Question"]
    path.write_text(json.dumps(items))
    with pytest.raises(DatasetError, match=r"test.json: item 1: missing column 'Question'"):
        load_dataset(path, format="datacv2")


# ---------------------------------------------------------------- BLINK

def test_blink_writes_each_image_and_reads_letters(tmp_path):
    path = files.write_blink(tmp_path / "val.parquet", 3, images=3)
    assert detect_format(path) == "blink"
    samples = list(load_dataset(path, images_root=tmp_path / "cache"))
    assert [s.answer for s in samples] == ["A", "B", "A"]
    assert [s.category for s in samples] == ["Jigsaw", "Relative_Depth", "Spatial_Relation"]
    assert samples[1].choices == ["(A) first", "(B) second"]
    assert [p.read_bytes() for p in samples[1].images] == [files.png_bytes(100 + k) for k in (1, 2, 3)]
    assert all(p.parent == (tmp_path / "cache").resolve() for p in samples[1].images)
    assert samples[0].metadata["prompt"].startswith("Which point")


def test_embedded_images_default_to_a_cache_reused_by_later_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = files.write_blink(tmp_path / "val.parquet", 2, images=2)
    first = [s.images for s in load_dataset(path)]
    assert all(p.is_relative_to((tmp_path / "xdg" / "trompe" / "blink").resolve()) for ims in first for p in ims)
    assert [s.images for s in load_dataset(path)] == first  # same file: same folder, nothing new written
    other = files.write_blink(tmp_path / "other" / "val.parquet", 2, images=2)
    assert load_dataset(other).samples[0].images[0].parent != first[0][0].parent
    assert len(list((tmp_path / "xdg" / "trompe" / "blink").iterdir())) == 2


def test_blink_test_split_has_hidden_answers(tmp_path):
    samples = list(load_dataset(files.write_blink(tmp_path / "test.parquet", 2, split="test"),
                                images_root=tmp_path / "c"))
    assert [s.answer for s in samples] == [None, None]


def test_blink_missing_image_and_column_are_named(tmp_path):
    path = files.write_blink(tmp_path / "val.parquet", 3)
    rewrite_parquet(path, lambda rows: rows[2].update(image_1=None))
    with pytest.raises(DatasetError, match=r"row 2 \(idx 'val_Spatial_Relation_2'\), image_1: image is missing"):
        load_dataset(path, images_root=tmp_path / "c")
    drop_column(path, "answer")
    with pytest.raises(DatasetError, match="missing column 'answer'"):
        load_dataset(path, format="blink", images_root=tmp_path / "c")


def test_a_folder_of_parquet_files_is_one_dataset(tmp_path):
    files.write_blink(tmp_path / "snap" / "Jigsaw" / "val-0.parquet", 2)
    files.write_blink(tmp_path / "snap" / "Depth" / "val-0.parquet", 2)
    assert len(load_dataset(tmp_path / "snap", images_root=tmp_path / "c")) == 4


# ---------------------------------------------------------------- BlindTest

def test_blindtest_maps_task_names_and_normalises_groundtruth(tmp_path):
    path = files.write_blindtest(tmp_path / "valid.parquet", 6)
    assert detect_format(path) == "blindtest"
    samples = list(load_dataset(path, images_root=tmp_path / "c"))
    assert [s.category for s in samples] == ["LineIntersections", "OverlappingShapes", "CircledLetter",
                                             "SubwayMap", "NestedSquares", "CountingRowsAndColumns"]
    assert [s.answer for s in samples] == ["2", "yes", "o", "1", "4", "5,6"]
    assert samples[0].metadata["metadata"] == {"thickness": 2}
    assert samples[3].images[0].read_bytes() == files.png_bytes(3)
    assert samples[3].metadata["task"] == "Subway Connections"


def test_blindtest_missing_image_names_row_and_task(tmp_path):
    path = files.write_blindtest(tmp_path / "valid.parquet", 3)
    rewrite_parquet(path, lambda rows: rows[1].update(image={"bytes": None, "path": None}))
    with pytest.raises(DatasetError, match=r"row 1 \(task 'Touching Circles'\), image: image is missing"):
        load_dataset(path, images_root=tmp_path / "c")


# ---------------------------------------------------------------- HallusionBench

def test_hallusionbench_keeps_every_question_as_the_official_scoring_does(tmp_path):
    path = files.write_hallusionbench(tmp_path, 8)
    assert detect_format(path) == "hallusionbench"
    samples = list(load_dataset(path))
    assert len(samples) == 8 and [len(s.images) for s in samples] == [1, 1, 1, 0, 1, 1, 1, 0]
    assert [s.answer for s in samples[:3]] == ["no", "yes", "no"]
    assert samples[0].id == "VD_illusion_0_0_0" and samples[0].category == "illusion"
    assert samples[0].images[0] == (tmp_path / "hallusion_bench" / "VD" / "illusion" / "0_0.png").resolve()
    assert samples[0].metadata["gt_answer_details"] == "They are equal."
    assert [len(load_dataset(path, split=split)) for split in ("image", "non_image")] == [6, 2]


def test_hallusionbench_missing_figure_is_named_with_the_fix(tmp_path):
    path = files.write_hallusionbench(tmp_path, 3)
    (tmp_path / "hallusion_bench" / "VD" / "illusion" / "1_0.png").unlink()
    with pytest.raises(DatasetError, match=r"HallusionBench.json: item 2 \(id 'VD_illusion_1_0_0'\), filename: "
                                           r"figure not found: ./VD/illusion/1_0.png .*pass --images-root"):
        load_dataset(path)


# ---------------------------------------------------------------- IllusionVQA

def test_illusionvqa_answers_become_option_letters(tmp_path):
    path = files.write_illusionvqa(tmp_path / "test.parquet", 5)
    assert detect_format(path) == "illusionvqa"
    samples = list(load_dataset(path, images_root=tmp_path / "c"))
    assert [s.answer for s in samples] == ["A", "B", "C", "D", "A"]
    assert samples[1].metadata["answer_text"] == samples[1].choices[1] == files.ILLUSIONVQA_OPTIONS[1]


def test_illusionvqa_answer_outside_the_options_is_named(tmp_path):
    path = files.write_illusionvqa(tmp_path / "test.parquet", 3)
    rewrite_parquet(path, lambda rows: rows[2].update(answer="a teapot"))
    with pytest.raises(DatasetError, match=r"row 2 \(id '2'\): answer 'a teapot' is not one of the options"):
        load_dataset(path, images_root=tmp_path / "c")


def test_illusionvqa_json_with_image_files(tmp_path):
    rows = [{"id": f"q{i}", "image": f"imgs/{i}.png", "question": "Which is longer?",
             "options": ["left", "right"], "answer": "right"} for i in range(2)]
    for i in range(2):
        (tmp_path / "imgs").mkdir(exist_ok=True)
        (tmp_path / "imgs" / f"{i}.png").write_bytes(files.png_bytes(i))
    (tmp_path / "iv.json").write_text(json.dumps(rows))
    assert [(s.id, s.answer) for s in load_dataset(tmp_path / "iv.json")] == [("q0", "B"), ("q1", "B")]


# ---------------------------------------------------------------- detection and errors

def test_unknown_format_and_missing_path_are_clear(tmp_path):
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps([{"foo": 1}]))
    with pytest.raises(DatasetError, match=r"cannot tell the format of .*odd.json \(found: foo\); pass --format"):
        load_dataset(odd)
    with pytest.raises(DatasetError, match="file not found"):
        load_dataset(tmp_path / "nothing.csv")
    with pytest.raises(DatasetError, match="format: unknown format 'xml'"):
        load_dataset(odd, format="xml")


def test_missing_pyarrow_says_how_to_install_it(tmp_path, monkeypatch):
    path = files.write_blindtest(tmp_path / "valid.parquet", 1)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(DatasetError, match=r"pip install 'trompe\[data\]'"):
        load_dataset(path, format="blindtest")
