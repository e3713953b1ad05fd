"""What each benchmark loader hands the harness, field by field, from small files in the benchmark's real layout.

Every expected Sample is written out by hand from the fixture's known content (the writers in
`trompe_agents.testing.dataset_files` cite the public file or dataset card each layout copies), never computed by
the loader's own helpers: a loader that read a wrong column, dropped a field, or named an error vaguely would
change what a run asks the model, how its reply is scored, or what the user is told to fix.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trompe_agents.datasets import blindtest, blink, hallusionbench, illusionvqa, vstar
from trompe_agents.datasets.harness import category_key
from trompe_agents.datasets.base import DatasetError, Sample
from trompe_agents.testing import dataset_files as files

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def stored(folder: Path, data: bytes) -> Path:
    """Where an embedded image lands: folder/<first 32 hex digits of its sha256>.png (parquet.write_image names
    images by content, so two rows never share a file by accident)."""
    return folder.resolve() / f"{hashlib.sha256(data).hexdigest()[:32]}.png"


def columns(*names: str) -> SimpleNamespace:
    """What a detector is shown: the file's column names."""
    return SimpleNamespace(names=frozenset(names))


def rewrite_parquet(path: Path, change) -> None:
    """Apply `change(rows)` to a parquet file's rows and write it back with the same schema."""
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def raised(call, *args, **kwargs) -> str:
    """The message of the DatasetError the call raises."""
    with pytest.raises(DatasetError) as err:
        call(*args, **kwargs)
    return str(err.value)


# ---------------------------------------------------------------- V* bench

VSTAR_TEXT_0 = ("What is the material of the glove (0)?\n(A) rubber\n(B) cotton\n(C) kevlar\n(D) leather\n"
                "Answer with the option's letter from the given choices directly.")
VSTAR_TEXT_1 = ("What is the material of the glove (1)?\n(A) left\n(B) right\n"
                "Answer with the option's letter from the given choices directly.")


def vstar_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, rows: list) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_vstar_samples_hold_every_field_of_the_jsonl(tmp_path):
    """V* (ziplab/DDP test_questions.jsonl): a wrong field here asks the model a different question, shows it
    another image or scores it against another letter."""
    path = files.write_vstar(tmp_path, 2)
    bench = tmp_path / "V_star bench"
    dataset = vstar.load_vstar(path, images_root=bench)
    assert dataset.name == "vstar"
    assert dataset.samples == [
        Sample(id="0", images=[(bench / "direct_attributes" / "sa_1000.jpg").resolve()],
               question="What is the material of the glove (0)?", answer="A",
               choices=["rubber", "cotton", "kevlar", "leather"], category="direct_attributes",
               metadata={"prompt": VSTAR_TEXT_0, "image": "direct_attributes/sa_1000.jpg"}, error=None,
               answer_type=None),
        Sample(id="1", images=[(bench / "relative_position" / "sa_1001.jpg").resolve()],
               question="What is the material of the glove (1)?", answer="B", choices=["left", "right"],
               category="relative_position",
               metadata={"prompt": VSTAR_TEXT_1, "image": "relative_position/sa_1001.jpg"}, error=None,
               answer_type=None)]
    assert [s.images for s in vstar.load_vstar(path, images_root=bench, split="all")] == [s.images for s in dataset]


@pytest.mark.parametrize("label, letter", [("(B)", "B"), ("b", "B"), (" (c) ", "C"), ("D", "D")])
def test_vstar_labels_in_their_awkward_forms_read_as_letters(tmp_path, label, letter):
    """A label written "(B)", lower case or padded is still option B; D, the last of four options, is accepted.
    Broken, a user's V* run would stop on a valid file or score against the wrong letter."""
    path = files.write_vstar(tmp_path, 1)
    rows = vstar_lines(path)
    rows[0]["label"] = label
    write_lines(path, rows)
    sample = vstar.load_vstar(path, images_root=tmp_path / "V_star bench").samples[0]
    assert (sample.answer, sample.metadata["prompt"]) == (letter, VSTAR_TEXT_0)


@pytest.mark.parametrize("label", ["E", "(E)", "", "()", 2, "XB", "AB"])  # "AB": once accepted (read as a substring)
def test_vstar_label_outside_the_options_is_refused_naming_line_id_and_count(tmp_path, label):
    """E is one past the fourth option; an empty label names none. Accepted, the sample could never be right."""
    path = files.write_vstar(tmp_path, 1)
    rows = vstar_lines(path)
    rows[0]["label"] = label
    write_lines(path, rows)
    assert raised(vstar.load_vstar, path, images_root=tmp_path / "V_star bench") == (
        f"{path}: line 1 (question_id '0'): label {label!r} is not one of the 4 option letters")


def test_vstar_errors_name_the_file_line_id_and_fix(tmp_path):
    """Each malformed V* file is refused with the line, the question id and what to do; a vague or empty message
    leaves the user hunting through a 191-line file."""
    path = files.write_vstar(tmp_path, 2)
    bench = tmp_path / "V_star bench"
    good = vstar_lines(path)
    # images beside the JSONL by default: here they are not, so the fix is named
    assert raised(vstar.load_vstar, path) == (
        f"{path}: line 1 (question_id '0'), image: file not found: "
        f"{(tmp_path / 'TeT benchmark').resolve() / 'direct_attributes' / 'sa_1000.jpg'}; pass --images-root "
        "(the V* bench folder holding direct_attributes/ and relative_position/)")
    write_lines(path, [good[0], {k: v for k, v in good[1].items() if k != "label"}])
    assert raised(vstar.load_vstar, path, images_root=bench) == (
        f"{path}: line 2: missing column 'label' (found: image, text, category, question_id)")
    write_lines(path, [5])
    assert raised(vstar.load_vstar, path, images_root=bench) == (
        f"{path}: line 1: missing column 'image' (found: none)")
    write_lines(path, [{**good[0], "text": "What is the material of the glove?"}])
    assert raised(vstar.load_vstar, path, images_root=bench) == (
        f"{path}: line 1 (question_id '0'): 'text' holds no '(A) ...' option lines")
    gapped = "Which?\n(A) rubber\n(C) kevlar"
    write_lines(path, [{**good[0], "text": gapped}])
    assert raised(vstar.load_vstar, path, images_root=bench) == (
        f"{path}: line 1 (question_id '0'): options must be lettered '(A) ...' from A without gaps (A-H), "
        f"got {gapped!r}")


def test_vstar_has_no_splits(tmp_path):
    """A --split given for the one-file V* bench is refused naming the file and the fix, not silently ignored."""
    path = files.write_vstar(tmp_path, 1)
    assert raised(vstar.load_vstar, path, images_root=tmp_path / "V_star bench", split="test") == (
        f"--split: {path} is a V* bench file, which has no splits; leave --split out")


def test_vstar_detect_needs_its_suffix_and_every_column():
    """`trompe benchmark` picks V* by itself only from a .jsonl holding image, text, label and question_id."""
    need = ("image", "text", "label", "question_id")
    assert vstar.detect(Path("q.jsonl"), columns(*need))
    assert not vstar.detect(Path("q.json"), columns(*need))
    for name in need:
        assert not vstar.detect(Path("q.jsonl"), columns(*(n for n in need if n != name))), name


# ---------------------------------------------------------------- IllusionVQA

IV_OPTIONS = ["The flat floor likely has a carpet that makes it look uneven.",
              "The floor looks flat but it's actually uneven.", "The floor has deep potholes.",
              "The floor has an uneven surface.", "The flat floor is made of tiles.", "Cannot tell from the image.",
              "The floor is a painting.", "The floor is a mirror."]


def iv_sample(i: int, image: Path, options: int, split: str | None, sample_id: str | None = None) -> Sample:
    """Row i of dataset_files' IllusionVQA writers: answer = option i % options, as its text."""
    return Sample(id=str(i) if sample_id is None else sample_id, images=[image],
                  question=f"Describe the floor in the image ({i})", answer="ABCDEFGH"[i % options],
                  choices=IV_OPTIONS[:options], category="deceptive design",
                  metadata={"answer_text": IV_OPTIONS[i % options], "split": split}, error=None, answer_type=None)


def test_illusionvqa_parquet_samples_hold_every_field(tmp_path):
    """HF csebuetnlp/illusionVQA-Comprehension parquet: answers given as option text become letters; broken, every
    IllusionVQA answer would be scored against the wrong option."""
    path = files.write_illusionvqa(tmp_path / "test.parquet", 3)
    cache = tmp_path / "cache"
    dataset = illusionvqa.load_illusionvqa(path, images_root=cache)
    assert dataset.name == "illusionvqa"
    assert dataset.samples == [iv_sample(i, stored(cache, files.png_bytes(i)), 4, None) for i in range(3)]
    ids = [326, 17, 4]  # the dataset's own ids, not the row numbers
    rewrite_parquet(path, lambda rows: [row.update(id=k) for row, k in zip(rows, ids, strict=True)])
    assert illusionvqa.load_illusionvqa(path, images_root=cache).samples == [
        iv_sample(i, stored(cache, files.png_bytes(i)), 4, None, str(ids[i])) for i in range(3)]
    assert dataset.samples[2].images[0].read_bytes() == files.png_bytes(2)


def test_illusionvqa_snapshot_reads_the_test_split_unless_told(tmp_path):
    """The HF snapshot holds train (few-shot), test and select: a run scores test by default, and --split picks
    another; broken, the few-shot rows would be scored as the benchmark, or --split ignored."""
    folder = files.write_illusionvqa_snapshot(tmp_path / "snap", 2)
    cache = tmp_path / "cache"
    test = illusionvqa.load_illusionvqa(folder, images_root=cache)
    assert test.name == "illusionvqa"
    assert test.samples == [iv_sample(i, stored(cache, files.png_bytes(i)), 8, "test") for i in range(2)]
    train = illusionvqa.load_illusionvqa(folder, images_root=cache, split="train")
    assert train.samples == [iv_sample(i, stored(cache, files.png_bytes(i)), 4, "train") for i in range(2)]
    assert [s.id for s in illusionvqa.load_illusionvqa(folder, images_root=cache, split="select")] == ["0", "1", "2"]


def test_illusionvqa_parquet_without_an_id_column_numbers_its_rows(tmp_path):
    """A parquet with no `id` column: each sample's id is its row number, so results still line up."""
    path = files.write_illusionvqa(tmp_path / "test.parquet", 2)
    pq.write_table(pq.read_table(path).drop_columns(["id"]), path)
    cache = tmp_path / "c"
    assert illusionvqa.load_illusionvqa(path, images_root=cache).samples == [
        iv_sample(i, stored(cache, files.png_bytes(i)), 4, None) for i in range(2)]


def test_illusionvqa_parquet_images_default_to_the_cache(tmp_path, monkeypatch):
    """Without --images-root, embedded images go to ~/.cache/trompe/illusionvqa/<file key>/ (XDG honoured)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = files.write_illusionvqa(tmp_path / "test.parquet", 1)
    image = illusionvqa.load_illusionvqa(path).samples[0].images[0]
    assert image.is_relative_to((tmp_path / "xdg" / "trompe" / "illusionvqa").resolve())
    assert image.name == stored(tmp_path, files.png_bytes(0)).name and image.read_bytes() == files.png_bytes(0)


def test_illusionvqa_parquet_row_errors_name_file_row_and_id(tmp_path):
    """A row without image bytes or with an answer outside its options is refused naming the row and id."""
    path = files.write_illusionvqa(tmp_path / "test.parquet", 2)
    rewrite_parquet(path, lambda rows: rows[1].update(image={"bytes": None, "path": "1.png"}))
    assert raised(illusionvqa.load_illusionvqa, path, images_root=tmp_path / "c") == (
        f"{path}: row 1 (id '1'), image: image is missing (no bytes)")
    path = files.write_illusionvqa(tmp_path / "test.parquet", 2)
    rewrite_parquet(path, lambda rows: rows[1].update(answer="a teapot"))
    assert raised(illusionvqa.load_illusionvqa, path, images_root=tmp_path / "c") == (
        f"{path}: row 1 (id '1'): answer 'a teapot' is not one of the options {IV_OPTIONS[:4]}")
    path = files.write_illusionvqa(tmp_path / "test.parquet", 2)
    pq.write_table(pq.read_table(path).drop_columns(["options"]), path)
    assert raised(illusionvqa.load_illusionvqa, path, images_root=tmp_path / "c") == (
        f"{path}: row 0 (id '0'): missing column 'options' (or 'choices')")


def test_illusionvqa_json_samples_hold_every_field(tmp_path):
    """The csebuetnlp/IllusionVQA result JSONs name each image twice (`image_path` under the data root, `image`
    the bare file name); either is found under --images-root. Broken, a user's JSON run shows no image."""
    path = files.write_illusionvqa_json(tmp_path, 2)
    data = tmp_path / "data"
    dataset = illusionvqa.load_illusionvqa(path, images_root=data)
    assert dataset.name == "illusionvqa"
    evals = data / "illusionVQA" / "comprehension" / "EVAL"
    assert dataset.samples == [iv_sample(i, (evals / f"{100 + i}.jpg").resolve(), 5, None) for i in range(2)]
    by_name = illusionvqa.load_illusionvqa(path, images_root=evals, split="all")
    assert by_name.samples == dataset.samples
    lines = tmp_path / "comprehension.jsonl"
    write_lines(lines, json.loads(path.read_text()))
    assert illusionvqa.load_illusionvqa(lines, images_root=data).samples == dataset.samples


def iv_json(tmp_path: Path, rows: list) -> Path:
    """A JSON list of IllusionVQA items whose images imgs/<i>.png exist beside it."""
    (tmp_path / "imgs").mkdir(exist_ok=True)
    for i in range(len(rows)):
        (tmp_path / "imgs" / f"{i}.png").write_bytes(files.png_bytes(i))
    path = tmp_path / "iv.json"
    path.write_text(json.dumps(rows))
    return path


def test_illusionvqa_json_option_and_answer_forms(tmp_path):
    """Options as a list, a JSON string or a `choices` column; answers as option text in any case and spacing, a
    letter in either case, a number, or none: each reads as the letter the user meant, ids default to the item
    number, and a missing category stays None."""
    rows = [
        {"image": "imgs/0.png", "question": "Q0", "options": ["left", "right"], "answer": " RIGHT "},
        {"image": "imgs/1.png", "question": "Q1", "options": '["left", "right"]', "answer": "b",
         "category": "size"},
        {"image": "imgs/2.png", "question": "Q2", "choices": [1, 2, 3], "answer": 2},
        {"image": "imgs/3.png", "question": "Q3", "options": ["up", "down", "left", "right"], "answer": "D"},
        {"image": "imgs/4.png", "question": "Q4", "options": ["up", "down"], "answer": None},
        {"image": "imgs/5.png", "question": "Q5", "options": ["up", "down"], "answer": ""},
        {"image": "imgs/6.png", "question": "Q6", "options": ["up", "down"]},
    ]
    path = iv_json(tmp_path, rows)
    dataset = illusionvqa.load_illusionvqa(path)
    image = lambda i: (tmp_path / "imgs" / f"{i}.png").resolve()  # noqa: E731
    meta = lambda answer: {"answer_text": answer, "split": None}  # noqa: E731
    assert dataset.name == "illusionvqa"
    assert dataset.samples == [
        Sample("0", [image(0)], "Q0", "B", ["left", "right"], None, meta(" RIGHT ")),
        Sample("1", [image(1)], "Q1", "B", ["left", "right"], "size", meta("b")),
        Sample("2", [image(2)], "Q2", "B", ["1", "2", "3"], None, meta(2)),
        Sample("3", [image(3)], "Q3", "D", ["up", "down", "left", "right"], None, meta("D")),
        Sample("4", [image(4)], "Q4", None, ["up", "down"], None, meta(None)),
        Sample("5", [image(5)], "Q5", None, ["up", "down"], None, meta("")),
        Sample("6", [image(6)], "Q6", None, ["up", "down"], None, meta(None)),
    ]


@pytest.mark.parametrize("answer", ["C", "c", "z", "ab", "(A)"])
def test_illusionvqa_letter_past_the_options_is_refused(tmp_path, answer):
    """With two options, C (one past the last) and a letter of no option are refused, not scored as an option
    the question never had."""
    path = iv_json(tmp_path, [{"id": "q7", "image": "imgs/0.png", "question": "Q", "options": ["left", "right"],
                               "answer": answer}])
    assert raised(illusionvqa.load_illusionvqa, path) == (
        f"{path}: item 0 (id 'q7'): answer {answer!r} is not one of the options ['left', 'right']")


def test_illusionvqa_json_errors_name_file_item_id_and_fix(tmp_path):
    """Each malformed IllusionVQA JSON is refused naming the item, its id and what is missing or how to fix it."""
    base = {"id": "q0", "image": "imgs/0.png", "question": "Q", "options": ["left", "right"], "answer": "left"}
    path = iv_json(tmp_path, [base])
    root = tmp_path.resolve()
    path.write_text(json.dumps({"items": [base]}))
    assert raised(illusionvqa.load_illusionvqa, path) == f"{path}: expected a JSON list of items"
    path.write_text(json.dumps([base, 5]))
    assert raised(illusionvqa.load_illusionvqa, path) == f"{path}: item 1 (id '1'): missing column 'image'"
    path.write_text(json.dumps([{k: v for k, v in base.items() if k != "question"}]))
    assert raised(illusionvqa.load_illusionvqa, path) == f"{path}: item 0 (id 'q0'): missing column 'question'"
    path.write_text(json.dumps([{**base, "image": "326.jpg", "image_path": "EVAL/326.jpg"}]))
    assert raised(illusionvqa.load_illusionvqa, path) == (
        f"{path}: item 0 (id 'q0'): image not found: EVAL/326.jpg or 326.jpg under {root}; "
        "pass --images-root FOLDER")
    path.write_text(json.dumps([{**base, "image": ""}]))
    assert raised(illusionvqa.load_illusionvqa, path) == (
        f"{path}: item 0 (id 'q0'): image not found: (no image field) under {root}; pass --images-root FOLDER")
    path.write_text(json.dumps([{k: v for k, v in base.items() if k != "options"}]))
    assert raised(illusionvqa.load_illusionvqa, path) == (
        f"{path}: item 0 (id 'q0'): missing column 'options' (or 'choices')")
    path.write_text(json.dumps([{**base, "options": [f"o{k}" for k in range(9)], "answer": "o0"}]))
    assert raised(illusionvqa.load_illusionvqa, path) == (
        f"{path}: item 0 (id 'q0'): 9 options; at most 8 (A-H) are supported")
    eight = [f"o{k}" for k in range(8)]
    path.write_text(json.dumps([{**base, "options": eight, "answer": "h"}]))
    assert illusionvqa.load_illusionvqa(path).samples[0].answer == "H"  # the eighth option, the last supported


def test_illusionvqa_json_has_no_splits(tmp_path):
    """A --split for a JSON file (which has none) is refused naming the file, not silently ignored."""
    path = files.write_illusionvqa_json(tmp_path, 1)
    assert raised(illusionvqa.load_illusionvqa, path, images_root=tmp_path / "data", split="test") == (
        f"--split: {path} is a IllusionVQA JSON file, which has no splits; leave --split out")


def test_illusionvqa_detect_each_format_on_its_own_conditions(tmp_path):
    """An IllusionVQA JSONL is told from trompe's own JSONL (an `images` list) by its one `image`; its JSON and
    parquet by the question and options columns. A wrong rule sends a user's file to the wrong loader."""
    jsonl, js, parquet = Path("q.jsonl"), Path("q.json"), Path("q.parquet")
    assert illusionvqa.detect(jsonl, columns("image", "question"))
    assert illusionvqa.detect(jsonl, columns("image"))
    assert not illusionvqa.detect(jsonl, columns("images", "image"))
    assert not illusionvqa.detect(jsonl, columns("images", "question"))
    assert not illusionvqa.detect(jsonl, columns("question", "options"))
    assert illusionvqa.detect(js, columns("question", "options"))
    assert illusionvqa.detect(js, columns("question", "choices"))
    assert not illusionvqa.detect(js, columns("question", "answer"))
    assert not illusionvqa.detect(js, columns("options", "image"))
    assert illusionvqa.detect(parquet, columns("image", "question", "options"))
    assert illusionvqa.detect(parquet, columns("image", "question", "choices"))
    assert illusionvqa.detect(tmp_path, columns("image", "question", "options"))
    assert not illusionvqa.detect(Path("q.csv"), columns("image", "question", "options"))
    assert not illusionvqa.detect(parquet, columns("question", "options"))
    assert not illusionvqa.detect(parquet, columns("image", "options"))
    assert not illusionvqa.detect(parquet, columns("image", "question"))
    assert not illusionvqa.detect(Path("q.csv"), columns("options"))


# ---------------------------------------------------------------- BlindTest

BT_PROMPT = "{} question {}? Answer with a number in curly brackets, e.g., {{3}}."
BT_EXPECTED = [  # HF task, groundtruth, SEVEX task name, normalised answer, answer type (dataset_files.BLINDTEST_ROWS)
    ("Line Plot Intersections", "2", "LineIntersections", "2", "integer"),
    ("Touching Circles", "Yes", "OverlappingShapes", "yes", "yesno"),
    ("Circled Letter", "o", "CircledLetter", "o", "letter"),
    ("Subway Connections", "1", "SubwayMap", "1", "integer"),
    ("Nested Squares", "4", "NestedSquares", "4", "integer"),
    ("Counting Grid - Blank Grids", "5,6", "CountingRowsAndColumns", "5,6", "pair"),
]


def bt_sample(i: int, image: Path) -> Sample:
    task, truth, name, answer, kind = BT_EXPECTED[i]
    return Sample(id=f"{name}-{i:05d}", images=[image], question=BT_PROMPT.format(task, i), answer=answer,
                  choices=None, category=name, error=None, answer_type=kind,
                  metadata={"task": task, "groundtruth": truth, "metadata": {"thickness": 2 + i % 3}})


def test_blindtest_samples_hold_every_field(tmp_path):
    """HF XAI/vlmsareblind: task names map to SEVEX's, ground truth is normalised and each task says what answer
    it asks for; broken, BlindTest tasks would be grouped, prompted or scored under the wrong task."""
    path = files.write_blindtest(tmp_path / "valid.parquet", 6)
    cache = tmp_path / "cache"
    dataset = blindtest.load_blindtest(path, images_root=cache)
    assert dataset.name == "blindtest"
    assert dataset.samples == [bt_sample(i, stored(cache, files.png_bytes(i))) for i in range(6)]


def test_blindtest_unknown_task_empty_truth_and_free_metadata_are_kept(tmp_path):
    """A task outside the known list keeps its own name (no answer type), an empty or missing groundtruth is no
    answer (not the word "none"), and metadata that is not JSON is kept as text."""
    path = files.write_blindtest(tmp_path / "valid.parquet", 3)

    def change(rows):
        rows[0].update(task="Mystery Task", groundtruth="", metadata=None)
        rows[1].update(task="Touching Circles", groundtruth=None, metadata="thin lines")
        rows[2].update(task="olympic counting - circles", groundtruth=" 7 ", metadata="[1, 2]")
    rewrite_parquet(path, change)
    cache = tmp_path / "cache"
    image = lambda i: stored(cache, files.png_bytes(i))  # noqa: E731
    assert blindtest.load_blindtest(path, images_root=cache).samples == [
        Sample("Mystery Task-00000", [image(0)], BT_PROMPT.format("Line Plot Intersections", 0), None, None,
               "Mystery Task", {"task": "Mystery Task", "groundtruth": "", "metadata": None}, None, None),
        Sample("OverlappingShapes-00001", [image(1)], BT_PROMPT.format("Touching Circles", 1), None, None,
               "OverlappingShapes", {"task": "Touching Circles", "groundtruth": None, "metadata": "thin lines"},
               None, "yesno"),
        Sample("CountingCircles-00002", [image(2)], BT_PROMPT.format("Circled Letter", 2), "7", None,
               "CountingCircles", {"task": "olympic counting - circles", "groundtruth": " 7 ", "metadata": [1, 2]},
               None, "integer"),
    ]


def test_blindtest_groundtruth_that_cannot_be_read_is_refused_naming_the_row(tmp_path):
    """A groundtruth of more than 64 digits is no count (forms.py reads no number that long): the file is refused
    naming the row and the value, instead of a sample no reply can match."""
    path = files.write_blindtest(tmp_path / "valid.parquet", 2)
    rewrite_parquet(path, lambda rows: rows[1].update(groundtruth="9" * 65))
    assert raised(blindtest.load_blindtest, path, images_root=tmp_path / "c") == (
        f"{path}: row 1: groundtruth {'9' * 65!r} cannot be read")


def test_blindtest_task_names():
    """HF and generator spellings name one SEVEX task; an unknown task keeps its own name (not None)."""
    assert blindtest.task_name("Counting Grid - Word Grids") == "CountingRowsAndColumns"
    assert blindtest.task_name("touching_circle") == "OverlappingShapes"
    assert blindtest.task_name("Mystery Task") == "Mystery Task"


def test_blindtest_snapshot_reads_the_valid_split_unless_told(tmp_path):
    """A snapshot with valid and test files: valid is scored by default, --split test reads test, and a split the
    snapshot lacks is refused; broken, a run silently mixes or ignores splits."""
    files.write_blindtest(tmp_path / "snap" / "data" / "valid-00000-of-00001.parquet", 2)
    files.write_blindtest(tmp_path / "snap" / "data" / "test-00000-of-00001.parquet", 3)
    cache = tmp_path / "cache"
    valid = blindtest.load_blindtest(tmp_path / "snap", images_root=cache)
    assert valid.samples == [bt_sample(i, stored(cache, files.png_bytes(i))) for i in range(2)]
    assert [s.id for s in blindtest.load_blindtest(tmp_path / "snap", images_root=cache, split="test")] == [
        "LineIntersections-00000", "OverlappingShapes-00001", "CircledLetter-00002"]
    one = files.write_blindtest(tmp_path / "one" / "valid-00000-of-00001.parquet", 1)
    assert raised(blindtest.load_blindtest, one, images_root=cache, split="test") == (
        f"--split: {one} has no split 'test'; its splits: valid (or 'all')")


def test_blindtest_detect_needs_task_and_groundtruth_in_parquet():
    """BlindTest is picked from a parquet file or snapshot folder with `task` and `groundtruth`."""
    assert blindtest.detect(Path("v.parquet"), columns("task", "groundtruth"))
    assert blindtest.detect(Path("."), columns("task", "groundtruth"))
    assert not blindtest.detect(Path("v.json"), columns("task", "groundtruth"))
    assert not blindtest.detect(Path("v.parquet"), columns("task", "image"))
    assert not blindtest.detect(Path("v.parquet"), columns("groundtruth", "image"))


# ---------------------------------------------------------------- BLINK

BLINK_CHOICES = ["(A) first", "(B) second"]


def blink_prompt(i: int) -> str:
    return f"Which point is closer? ({i})\nSelect from the following choices.\n(A) first\n(B) second"


def blink_sample(i: int, cache: Path, images: int, split: str | None, raw: str | None, answer: str | None) -> Sample:
    """Row i of dataset_files.write_blink: subtasks cycle Jigsaw, Relative_Depth, Spatial_Relation."""
    task = ["Jigsaw", "Relative_Depth", "Spatial_Relation"][i % 3]
    return Sample(id=f"{split or 'val'}_{task}_{i}",
                  images=[stored(cache, files.png_bytes(100 * i + k)) for k in range(1, images + 1)],
                  question=f"Which point is closer? ({i})", answer=answer, choices=BLINK_CHOICES, category=task,
                  metadata={"prompt": blink_prompt(i), "raw_answer": raw, "split": split}, error=None,
                  answer_type=None)


def test_blink_file_samples_hold_every_field(tmp_path):
    """One BLINK config file (HF BLINK-Benchmark/BLINK): every image of a row in order, "(A)" read as A; broken,
    the model is shown too few images or scored against the wrong letter."""
    path = files.write_blink(tmp_path / "val.parquet", 3, images=3)
    cache = tmp_path / "cache"
    dataset = blink.load_blink(path, images_root=cache)
    assert dataset.name == "blink"
    assert dataset.samples == [blink_sample(i, cache, 3, None, ["(A)", "(B)"][i % 2], "AB"[i % 2])
                                for i in range(3)]


def test_blink_snapshot_reads_val_unless_told(tmp_path):
    """A snapshot holds val (answers) and test (answers hidden): val is read by default, test on request, its
    hidden answers left unset rather than refused."""
    folder = files.write_blink_snapshot(tmp_path / "snap", 2)
    cache = tmp_path / "cache"
    assert blink.load_blink(folder, images_root=cache).samples == [
        blink_sample(i, cache, 2, "val", ["(A)", "(B)"][i], "AB"[i]) for i in range(2)]
    test = blink.load_blink(folder, images_root=cache, split="test")
    assert test.name == "blink"
    assert test.samples == [blink_sample(i, cache, 2, "test", "hidden", None) for i in range(2)]


def test_blink_answer_forms_and_hidden_answers(tmp_path):
    """Answers "(b)", " B " and "b" are option B; "", "?", "hidden" and null mean hidden (no answer); the raw
    answer is kept for the record."""
    raws = ["(b)", " B ", "b", "", "?", "hidden", None]
    path = files.write_blink(tmp_path / "val.parquet", len(raws), images=1)
    rewrite_parquet(path, lambda rows: [row.update(answer=raw) for row, raw in zip(rows, raws, strict=True)])
    samples = blink.load_blink(path, images_root=tmp_path / "c").samples
    assert [(s.answer, s.metadata["raw_answer"]) for s in samples] == [
        ("B", "(b)"), ("B", " B "), ("B", "b"), (None, ""), (None, "?"), (None, "hidden"), (None, None)]


def test_blink_answer_that_is_no_letter_is_refused_naming_row_and_idx(tmp_path):
    """An answer like "maybe" is refused with the file, row and idx, not scored as nothing."""
    path = files.write_blink(tmp_path / "val.parquet", 2, images=1)
    rewrite_parquet(path, lambda rows: rows[1].update(answer="maybe"))
    assert raised(blink.load_blink, path, images_root=tmp_path / "c") == (
        f"{path}: row 1 (idx 'val_Relative_Depth_1'): answer 'maybe' is not a letter like (A)")


def test_blink_category_from_sub_task_else_idx_and_only_image_1_to_4(tmp_path):
    """The category is the `sub_task` column, else read from idx; images are image_1..image_4 only, skipping
    null ones, so a stray image_0 or image_5 column is never shown to the model."""
    path = files.write_blink(tmp_path / "val.parquet", 3, images=3)
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["sub_task"] = None
    rows[1]["sub_task"] = "Relative Depth"
    rows[2]["image_2"] = None
    extra = {"bytes": files.png_bytes(999), "path": "x.png"}
    for row in rows:
        row.update(image_0=extra, image_5=extra)
    schema = table.schema.append(pa.field("image_0", IMAGE)).append(pa.field("image_5", IMAGE))
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    cache = tmp_path / "c"
    samples = blink.load_blink(path, images_root=cache).samples
    assert [s.category for s in samples] == ["Jigsaw", "Relative Depth", "Spatial_Relation"]
    assert [s.images for s in samples] == [
        [stored(cache, files.png_bytes(k)) for k in (1, 2, 3)],
        [stored(cache, files.png_bytes(k)) for k in (101, 102, 103)],
        [stored(cache, files.png_bytes(k)) for k in (201, 203)]]


def test_blink_subtask_names():
    """'val_Relative_Depth_12' is subtask Relative_Depth; spellings of one subtask share one key."""
    assert blink.subtask("val_Relative_Depth_12") == "Relative_Depth"
    assert blink.subtask("test_IQ_Test_7") == "IQ_Test"
    assert blink.subtask("Jigsaw") == "Jigsaw"
    assert category_key("  Relative Depth ") == "relative_depth"
    assert category_key("Relative_Depth") == category_key("relative - depth") == "relative_depth"


def test_blink_extract_reads_the_option_letter():
    """The letter BLINK's pipeline reads in a reply, without brackets; option texts count only with the choices;
    None where the reply names no option."""
    choices = ["the first image", "the second image"]
    assert blink.extract("(B)", choices) == "B"
    assert blink.extract("It is the second image.", choices) == "B"
    assert blink.extract("It is the second image.", []) is None
    assert blink.extract("b", None) == "B"
    assert blink.extract("I cannot tell.", choices) is None


def test_blink_detect_needs_idx_choices_and_image_1_in_parquet():
    """BLINK is picked from a parquet file or snapshot folder with idx, choices and image_1."""
    need = ("idx", "choices", "image_1")
    assert blink.detect(Path("v.parquet"), columns(*need))
    assert blink.detect(Path("."), columns(*need))
    assert not blink.detect(Path("v.json"), columns(*need))
    for name in need:
        assert not blink.detect(Path("v.parquet"), columns(*(n for n in need if n != name))), name


# ---------------------------------------------------------------- HallusionBench

def hb_item(i: int) -> dict:
    """Item i of dataset_files.hallusion_items (tianyi-lab/HallusionBench HallusionBench.json): every fourth a
    text-only VS question."""
    text_only = i % 4 == 3
    category, figure = ("VS", "0") if text_only else ("VD", str(i % 2))
    return {"category": category, "subcategory": "illusion", "visual_input": "0" if text_only else "1",
            "set_id": str(i // 2), "figure_id": figure, "question_id": "0", "gt_answer_details": "They are equal.",
            "filename": None if text_only else f"./VD/illusion/{i // 2}_{figure}.png", "sample_note": ""}


def hb_sample(i: int, images: list[Path]) -> Sample:
    item = hb_item(i)
    return Sample(id=f"{item['category']}_illusion_{i // 2}_{item['figure_id']}_0", images=images,
                  question=f"Is the left line longer than the right one ({i})?", answer=["no", "yes"][i % 2],
                  choices=None, category="illusion", metadata=item, error=None, answer_type="yesno")


def test_hallusionbench_json_samples_hold_every_field(tmp_path):
    """The official JSON: every question (text-only ones with no image), gt_answer 1/0 as yes/no, the keys the
    official scoring groups by kept in metadata; broken, aAcc/qAcc/fAcc are computed over wrong groups."""
    path = files.write_hallusionbench(tmp_path, 4)
    figures = tmp_path / "hallusion_bench" / "VD" / "illusion"
    dataset = hallusionbench.load_hallusionbench(path)
    assert dataset.name == "hallusionbench"
    assert dataset.samples == [hb_sample(0, [(figures / "0_0.png").resolve()]),
                               hb_sample(1, [(figures / "0_1.png").resolve()]),
                               hb_sample(2, [(figures / "1_0.png").resolve()]), hb_sample(3, [])]
    assert hallusionbench.load_hallusionbench(path, split="image").samples == dataset.samples[:3]
    assert hallusionbench.load_hallusionbench(path, split="non_image").samples == dataset.samples[3:]
    assert hallusionbench.load_hallusionbench(path, split="all").samples == dataset.samples


def test_hallusionbench_json_figures_under_images_root_or_the_official_path(tmp_path):
    """Figures moved elsewhere are found under --images-root; an item whose `filename` is missing or stale is
    found at category/subcategory/<set_id>_<figure_id>.png, as the official utils.py builds it."""
    path = files.write_hallusionbench(tmp_path, 2)
    moved = tmp_path / "moved"
    shutil.move(tmp_path / "hallusion_bench", moved)
    figures = moved / "VD" / "illusion"
    items = json.loads(path.read_text())
    items[0]["filename"] = None
    items[1]["filename"] = "./VD/illusion/renamed.png"
    path.write_text(json.dumps(items))
    samples = hallusionbench.load_hallusionbench(path, images_root=moved).samples
    assert [s.images for s in samples] == [[(figures / "0_0.png").resolve()], [(figures / "0_1.png").resolve()]]
    assert [s.metadata["filename"] for s in samples] == [None, "./VD/illusion/renamed.png"]


@pytest.mark.parametrize("gt, answer", [(" 1 ", "yes"), (1, "yes"), (0, "no"), ("0", "no")])
def test_hallusionbench_gt_answer_forms(tmp_path, gt, answer):
    """gt_answer as text with spaces or as a number still reads as yes/no."""
    path = files.write_hallusionbench(tmp_path, 1)
    items = json.loads(path.read_text())
    items[0]["gt_answer"] = gt
    path.write_text(json.dumps(items))
    assert hallusionbench.load_hallusionbench(path).samples[0].answer == answer


def test_hallusionbench_json_errors_name_file_item_id_and_fix(tmp_path):
    """Each malformed HallusionBench JSON is refused naming the item, its id, the field and the fix."""
    path = files.write_hallusionbench(tmp_path, 2)
    good = json.loads(path.read_text())
    path.write_text(json.dumps([{**good[0], "gt_answer": "2"}]))
    assert raised(hallusionbench.load_hallusionbench, path) == (
        f"{path}: item 0 (id 'VD_illusion_0_0_0'): gt_answer must be '0' or '1', got '2'")
    path.write_text(json.dumps({"questions": good}))
    assert raised(hallusionbench.load_hallusionbench, path) == f"{path}: expected a JSON list of questions"
    path.write_text(json.dumps([{k: v for k, v in good[0].items() if k != "gt_answer"}]))
    assert raised(hallusionbench.load_hallusionbench, path) == (
        f"{path}: item 0: missing column 'gt_answer' (found: category, subcategory, visual_input, set_id, "
        "figure_id, sample_note, question_id, question, gt_answer_details, filename)")
    path.write_text(json.dumps([good[0], 5]))
    assert raised(hallusionbench.load_hallusionbench, path) == (
        f"{path}: item 1: missing column 'category' (found: none)")
    path.write_text(json.dumps(good))
    (tmp_path / "hallusion_bench" / "VD" / "illusion" / "0_1.png").unlink()
    assert raised(hallusionbench.load_hallusionbench, path) == (
        f"{path}: item 1 (id 'VD_illusion_0_1_0'), filename: figure not found: ./VD/illusion/0_1.png under "
        f"{(tmp_path / 'hallusion_bench').resolve()}, {tmp_path.resolve()}; pass --images-root FOLDER (the folder "
        "holding VD/ and VS/)")


def test_hallusionbench_split_outside_its_splits_is_refused(tmp_path):
    """--split accepts image, non_image and all; another is refused naming the file and the accepted values."""
    path = files.write_hallusionbench(tmp_path, 1)
    assert raised(hallusionbench.load_hallusionbench, path, split="train") == (
        f"--split: {path}: HallusionBench splits are image, non_image, all, got 'train'")
    folder = files.write_hallusionbench_lmms(tmp_path / "lmms", 1)
    assert raised(hallusionbench.load_hallusionbench, folder, split="test") == (
        f"--split: {folder}: HallusionBench splits are image, non_image, all, got 'test'")


def test_hallusionbench_lmms_parquet_samples_hold_every_field(tmp_path):
    """lmms-lab/HallusionBench: image and non_image files read as one dataset, the same samples as the JSON with
    the embedded figures written out; --split keeps one of them."""
    folder = files.write_hallusionbench_lmms(tmp_path / "lmms", 4)
    cache = tmp_path / "cache"
    dataset = hallusionbench.load_hallusionbench(folder, images_root=cache)
    assert dataset.name == "hallusionbench"
    expected = [hb_sample(i, [stored(cache, files.png_bytes(i))]) for i in range(3)] + [hb_sample(3, [])]
    assert dataset.samples == expected
    assert hallusionbench.load_hallusionbench(folder, images_root=cache, split="non_image").samples == expected[3:]
    assert hallusionbench.load_hallusionbench(folder, images_root=cache, split="image").samples == expected[:3]
    one = folder / "data" / "image-00000-of-00001.parquet"
    assert hallusionbench.load_hallusionbench(one, images_root=cache).samples == expected[:3]


def test_hallusionbench_lmms_images_default_to_the_cache(tmp_path, monkeypatch):
    """Without --images-root, figures go to ~/.cache/trompe/hallusionbench/<file key>/ (XDG honoured)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = files.write_hallusionbench_lmms(tmp_path / "lmms", 1)
    image = hallusionbench.load_hallusionbench(folder).samples[0].images[0]
    assert image.is_relative_to((tmp_path / "xdg" / "trompe" / "hallusionbench").resolve())
    assert image.read_bytes() == files.png_bytes(0)


def test_hallusionbench_lmms_row_errors_name_file_row_and_id(tmp_path):
    """A figure row without image bytes, or a bad gt_answer, is refused naming the parquet file, row and id."""
    folder = files.write_hallusionbench_lmms(tmp_path / "lmms", 3)
    images = folder / "data" / "image-00000-of-00001.parquet"
    rewrite_parquet(images, lambda rows: rows[1].update(image=None))
    assert raised(hallusionbench.load_hallusionbench, folder, images_root=tmp_path / "c") == (
        f"{images}: row 1 (id 'VD_illusion_0_1_0'), image: image is missing (no bytes)")
    rewrite_parquet(images, lambda rows: rows[1].update(image={"bytes": files.png_bytes(1), "path": None},
                                                        gt_answer="yes"))
    assert raised(hallusionbench.load_hallusionbench, folder, images_root=tmp_path / "c") == (
        f"{images}: row 1 (id 'VD_illusion_0_1_0'): gt_answer must be '0' or '1', got 'yes'")


def test_hallusionbench_detect_json_and_parquet_on_their_own_columns(tmp_path):
    """The JSON needs gt_answer and visual_input; the parquet (file or folder) needs `image` too."""
    assert hallusionbench.detect(Path("h.json"), columns("gt_answer", "visual_input"))
    assert not hallusionbench.detect(Path("h.json"), columns("gt_answer", "image"))
    assert not hallusionbench.detect(Path("h.json"), columns("visual_input", "image"))
    need = ("gt_answer", "visual_input", "image")
    assert hallusionbench.detect(Path("h.parquet"), columns(*need))
    assert hallusionbench.detect(tmp_path, columns(*need))
    assert not hallusionbench.detect(Path("h.csv"), columns(*need))
    for name in need:
        assert not hallusionbench.detect(Path("h.parquet"), columns(*(n for n in need if n != name))), name
