"""Small dataset files in each benchmark's real on-disk layout, for tests and benchmarks (no downloads).

Each writer makes `n` rows with real PNG bytes and returns the path `load_dataset` should be given. Each
writer's docstring names the public file or dataset card its columns and layout copy; answers cycle so every
option appears.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image


def png_bytes(k: int, size: int = 16) -> bytes:
    """A small PNG whose pixels depend on k, so every image in a set is different."""
    rng = np.random.default_rng(k)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def _image_file(folder: Path, rel: str, k: int) -> str:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(k))
    return rel


def _parquet(path: Path, rows: list[dict[str, Any]], schema) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def _image_type():
    import pyarrow as pa

    return pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def write_generic(folder: Path, n: int) -> Path:
    """probes.jsonl with one image per row (trompe's own format, written by `trompe probes generate`)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": f"s{i}", "images": [_image_file(folder, f"images/s{i}.png", i)],
                         "question": f"Question {i}?", "answer": "yes" if i % 2 else "no", "choices": None,
                         "category": "size", "metadata": {"i": i}}) for i in range(n)]
    path = folder / "probes.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


TASK1_PROMPT = ("Are the two black lines of equal length?\nAnswer Instructions:\n1. Write your reasoning inside "
                "<reasons>...</reasons>.\n   - Use natural language explanation.\n2. Give the final numeric answer "
                "inside <answer>...</answer>.\n   - Use \"1\" if yes.\n   - Use \"0\" if no.\n   - Do not write "
                "anything else inside <answer>.")


def write_datacv1(folder: Path, n: int, answers: bool = False) -> Path:
    """DataCV Task I test.csv as ziplab/DDP asset/Data/task1/test.csv: `index,image_path,prompt`, image_path
    'test/0.png' relative to the CSV's folder (an `answer` column of 1/0 when asked)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "test.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["index", "image_path", "prompt"] + (["answer"] if answers else []))
        for i in range(n):
            row = [i, _image_file(folder, f"test/{i}.png", i), TASK1_PROMPT]
            writer.writerow(row + ([i % 2] if answers else []))
    return path


def write_datacv2(folder: Path, n: int, answers: bool = False, ids: list[int] | None = None) -> Path:
    """DataCV Task II test.json as ziplab/DDP asset/Data/task2/test.json: `image_name` ("17.jpg", the number is
    the submission id; src/task2.py reads int(image_name.split('.')[0])), `Question` ("Question:\n..."),
    `option` ("Option: \nA. 6\nB. 5\nC. 4\nD. Not Sure\n"). Images go to folder/images, apart from the JSON,
    as in the release (pass that folder as --images-root). `ids` picks the image numbers (a subset)."""
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for k, i in enumerate(ids if ids is not None else range(n)):
        item = {"image_name": _image_file(folder / "images", f"{i}.png", i),
                "Question": f"Question:\nHow many fingers are in the image ({i})?",
                "option": "Option: \nA. 6\nB. 5\nC. 4\nD. Not Sure\n"}
        if answers:
            item["answer"] = "ABCD"[k % 4]
        items.append(item)
    path = folder / "test.json"
    path.write_text(json.dumps(items, indent=2))
    return path


BLINK_TASKS = ["Jigsaw", "Relative_Depth", "Spatial_Relation"]


def write_blink(path: Path, n: int, split: str = "val", images: int = 2, side: int = 16) -> Path:
    """A BLINK config file (HF BLINK-Benchmark/BLINK, <Subtask>/<split>-00000-of-00001.parquet): `idx`
    ("val_Jigsaw_1"), `question`, `sub_task`, `choices` (list), `answer` ("(A)"; hidden in test),
    `image_1`..`image_4` (image structs of `side`-pixel PNGs, unused ones null), `prompt`."""
    import pyarrow as pa

    rows = []
    for i in range(n):
        task = BLINK_TASKS[i % len(BLINK_TASKS)]
        row = {"idx": f"{split}_{task}_{i}", "question": f"Which point is closer? ({i})", "sub_task": task,
               "choices": ["(A) first", "(B) second"],
               "answer": "hidden" if split == "test" else ["(A)", "(B)"][i % 2],
               "prompt": f"Which point is closer? ({i})\nSelect from the following choices.\n(A) first\n(B) second"}
        for k in range(1, 5):
            row[f"image_{k}"] = {"bytes": png_bytes(100 * i + k, side), "path": f"{i}_{k}.png"} if k <= images else None
        rows.append(row)
    image = _image_type()
    schema = pa.schema([("idx", pa.string()), ("question", pa.string()), ("sub_task", pa.string()),
                        ("choices", pa.list_(pa.string())), ("answer", pa.string()),
                        *((f"image_{k}", image) for k in range(1, 5)), ("prompt", pa.string())])
    return _parquet(path, rows, schema)


def write_blink_snapshot(folder: Path, n: int) -> Path:
    """A BLINK snapshot folder: one config with val (labelled) and test (hidden answers) files."""
    write_blink(folder / "Relative_Depth" / "val-00000-of-00001.parquet", n, "val")
    write_blink(folder / "Relative_Depth" / "test-00000-of-00001.parquet", n, "test")
    return folder


BLINDTEST_ROWS = [("Line Plot Intersections", "2"), ("Touching Circles", "Yes"), ("Circled Letter", "o"),
                  ("Subway Connections", "1"), ("Nested Squares", "4"), ("Counting Grid - Blank Grids", "5,6")]


def write_blindtest(path: Path, n: int) -> Path:
    """A BlindTest parquet as HF XAI/vlmsareblind (split `valid`): `task, image, prompt, groundtruth, metadata`
    (strings except `image`)."""
    import pyarrow as pa

    rows = []
    for i in range(n):
        task, truth = BLINDTEST_ROWS[i % len(BLINDTEST_ROWS)]
        rows.append({"task": task, "image": {"bytes": png_bytes(i), "path": None},
                     "prompt": f"{task} question {i}? Answer with a number in curly brackets, e.g., {{3}}.",
                     "groundtruth": truth, "metadata": json.dumps({"thickness": 2 + i % 3})})
    schema = pa.schema([("task", pa.string()), ("image", _image_type()), ("prompt", pa.string()),
                        ("groundtruth", pa.string()), ("metadata", pa.string())])
    return _parquet(path, rows, schema)


def hallusion_items(n: int) -> list[dict[str, Any]]:
    """HallusionBench questions as tianyi-lab/HallusionBench HallusionBench.json holds them: every fourth is a
    text-only VS question (visual_input "0", figure_id "0", filename null); the others a VD figure whose
    `filename` ("./VD/illusion/3_1.png") is relative to the image folder. Two figures share each question_id
    (a question pair), so qAcc, fAcc and aAcc differ."""
    items = []
    for i in range(n):
        text_only = i % 4 == 3
        category, figure = ("VS", "0") if text_only else ("VD", str(i % 2))
        set_id = str(i // 2)
        items.append({"category": category, "subcategory": "illusion", "visual_input": "0" if text_only else "1",
                      "set_id": set_id, "figure_id": figure, "sample_note": "", "question_id": "0",
                      "question": f"Is the left line longer than the right one ({i})?",
                      "gt_answer_details": "They are equal.", "gt_answer": str(i % 2),
                      "filename": None if text_only else f"./{category}/illusion/{set_id}_{figure}.png"})
    return items


def hallusion_set_items(sets: int, questions: int = 2, figures: int = 2) -> list[dict[str, Any]]:
    """HallusionBench VD sets of the real shape (tianyi-lab/HallusionBench HallusionBench.json; utils.py
    get_eval_pair_all and get_eval_fig group by them): each set asks several questions (question_id 0, 1, ...),
    each of them of every figure of the set (figure_id 0, the original, then the edited ones), so a set's question
    groups, figure groups and the set itself all hold different items. Gold answers alternate by figure."""
    return [{"category": "VD", "subcategory": "illusion", "visual_input": "1", "set_id": str(s),
             "figure_id": str(f), "sample_note": "", "question_id": str(q),
             "question": f"Set {s}, question {q}: is the left line longer than the right one?",
             "gt_answer_details": "They are equal.", "gt_answer": str((q + f) % 2),
             "filename": f"./VD/illusion/{s}_{f}.png"}
            for s in range(sets) for q in range(questions) for f in range(figures)]


def write_hallusionbench(folder: Path, n: int, items: list[dict[str, Any]] | None = None) -> Path:
    """HallusionBench.json beside hallusion_bench/ (what the repository's hallusion_bench.zip unpacks to): `n` of
    `hallusion_items`, or the `items` given."""
    folder.mkdir(parents=True, exist_ok=True)
    items = hallusion_items(n) if items is None else items
    for k, item in enumerate(items):
        if item["filename"]:
            _image_file(folder / "hallusion_bench", item["filename"], k)
    path = folder / "HallusionBench.json"
    path.write_text(json.dumps(items, indent=4))
    return path


def write_hallusionbench_lmms(folder: Path, n: int) -> Path:
    """lmms-lab/HallusionBench: the same string columns plus `image`, in data/image-00000-of-00001.parquet
    (questions with a figure) and data/non_image-00000-of-00001.parquet (image null), per its dataset card."""
    import pyarrow as pa

    items = hallusion_items(n)
    names = ["category", "subcategory", "visual_input", "set_id", "figure_id", "sample_note", "question_id",
             "question", "gt_answer_details", "gt_answer", "filename"]
    schema = pa.schema([*((name, pa.string()) for name in names), ("image", _image_type())])
    for split, keep in (("image", True), ("non_image", False)):
        rows = [{**item, "image": {"bytes": png_bytes(k), "path": None} if keep else None}
                for k, item in enumerate(items) if (item["visual_input"] != "0") == keep]
        _parquet(folder / "data" / f"{split}-00000-of-00001.parquet", rows, schema)
    return folder


ILLUSIONVQA_OPTIONS = ["The flat floor likely has a carpet that makes it look uneven.",
                       "The floor looks flat but it's actually uneven.", "The floor has deep potholes.",
                       "The floor has an uneven surface.", "The flat floor is made of tiles.",
                       "Cannot tell from the image.", "The floor is a painting.", "The floor is a mirror."]


def _illusionvqa_row(i: int, options: int) -> dict[str, Any]:
    choices = ILLUSIONVQA_OPTIONS[:options]
    return {"question": f"Describe the floor in the image ({i})", "options": choices,
            "answer": choices[i % options], "category": "deceptive design", "id": i}


def write_illusionvqa(path: Path, n: int, options: int = 4) -> Path:
    """An IllusionVQA parquet as HF csebuetnlp/illusionVQA-Comprehension: `image, question, options, answer`
    (the answer is an option's text), `category`, `id`; up to 8 options."""
    import pyarrow as pa

    rows = [{"image": {"bytes": png_bytes(i), "path": f"{i}.png"}, **_illusionvqa_row(i, options)}
            for i in range(n)]
    schema = pa.schema([("image", _image_type()), ("question", pa.string()), ("options", pa.list_(pa.string())),
                        ("answer", pa.string()), ("category", pa.string()), ("id", pa.int64())])
    return _parquet(path, rows, schema)


def write_illusionvqa_snapshot(folder: Path, n: int) -> Path:
    """The HF snapshot's data/ folder: train (few-shot), test and select files; test items have 5-8 options."""
    write_illusionvqa(folder / "data" / "train-00000-of-00001.parquet", 2)
    write_illusionvqa(folder / "data" / "test-00000-of-00001.parquet", n, options=8)
    write_illusionvqa(folder / "data" / "select-00000-of-00001.parquet", 3)
    return folder


def write_illusionvqa_json(folder: Path, n: int) -> Path:
    """A result JSON of the csebuetnlp/IllusionVQA repository (result_jsons/*.json): the parquet columns plus
    `image` ("326.jpg") and `image_path` ("illusionVQA/comprehension/EVAL/326.jpg", under the data root)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n):
        rel = _image_file(folder / "data", f"illusionVQA/comprehension/EVAL/{100 + i}.jpg", i)
        rows.append({**_illusionvqa_row(i, 5), "image": f"{100 + i}.jpg", "image_path": rel})
    path = folder / "comprehension.json"
    path.write_text(json.dumps(rows, indent=4))
    return path


def write_vstar(folder: Path, n: int) -> Path:
    """V* bench questions as ziplab/DDP "asset/TeT benchmark/test_questions.jsonl": `image`
    ("direct_attributes/sa_4690.jpg", under the V* bench folder), `text` with "(A) ..." option lines and the
    instruction, `category`, `question_id`, `label`. Images go to folder/"V_star bench", apart from the JSONL."""
    questions = folder / "TeT benchmark"
    questions.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        category = ["direct_attributes", "relative_position"][i % 2]
        rel = _image_file(folder / "V_star bench", f"{category}/sa_{1000 + i}.jpg", i)
        options = ["rubber", "cotton", "kevlar", "leather"] if i % 2 == 0 else ["left", "right"]
        text = (f"What is the material of the glove ({i})?\n" + "".join(f"({'ABCD'[k]}) {o}\n"
                for k, o in enumerate(options)) + "Answer with the option's letter from the given choices directly.")
        lines.append(json.dumps({"image": rel, "text": text, "category": category, "question_id": str(i),
                                 "label": "ABCD"[i % len(options)]}))
    path = questions / "test_questions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_tet(path: Path, n: int, without_bytes: tuple[int, ...] = ()) -> Path:
    """A TeT-style parquet as ziplab/DDP "asset/TeT benchmark/colorblindhard-00000-of-00001.parquet":
    `idx, question, image{bytes,path}, groundtruth, task`; rows in `without_bytes` carry a path but no bytes."""
    import pyarrow as pa

    rows = [{"idx": i, "question": f"Which number is hidden in the dots ({i})?\n(A) 12\n(B) 74\n(C) 21",
             "image": {"bytes": None if i in without_bytes else png_bytes(i), "path": f"{i}.png"},
             "groundtruth": "ABC"[i % 3], "task": "colorblind"} for i in range(n)]
    schema = pa.schema([("idx", pa.int64()), ("question", pa.string()), ("image", _image_type()),
                        ("groundtruth", pa.string()), ("task", pa.string())])
    return _parquet(path, rows, schema)
