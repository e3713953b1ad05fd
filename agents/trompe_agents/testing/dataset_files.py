"""Small dataset files in each benchmark's real on-disk format, for tests and benchmarks (no downloads).

Each writer makes `n` rows with real PNG bytes and returns the path `load_dataset` should be given. Rows
follow the public releases' column names (see REFERENCE.md §7); answers cycle so every option appears.
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
    """probes.jsonl with one image per row."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": f"s{i}", "images": [_image_file(folder, f"images/s{i}.png", i)],
                         "question": f"Question {i}?", "answer": "yes" if i % 2 else "no", "choices": None,
                         "category": "size", "metadata": {"i": i}}) for i in range(n)]
    path = folder / "probes.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_datacv1(folder: Path, n: int, answers: bool = False) -> Path:
    """DataCV Task I test.csv: `index,image_path,prompt` (an `answer` column of 1/0 when asked)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "test.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["index", "image_path", "prompt"] + (["answer"] if answers else []))
        for i in range(n):
            row = [i, _image_file(folder, f"images/{i}.png", i), f"Are the two lines in image {i} equal? "
                   "Answer in <reasons>...</reasons><answer>1 or 0</answer>."]
            writer.writerow(row + ([i % 2] if answers else []))
    return path


def write_datacv2(folder: Path, n: int, answers: bool = False) -> Path:
    """DataCV Task II test.json: `image_name, Question, option` with lines 'A. ...' to 'D. ...'."""
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for i in range(n):
        item = {"image_name": _image_file(folder, f"img/{i}.jpg.png", i), "Question": f"Which circle is larger ({i})?",
                "option": "A. The left one\nB. The right one\nC. They are equal\nD. Not Sure"}
        if answers:
            item["answer"] = "ABCD"[i % 4]
        items.append(item)
    path = folder / "test.json"
    path.write_text(json.dumps(items, indent=1))
    return path


def write_blink(path: Path, n: int, split: str = "val", images: int = 2) -> Path:
    """A BLINK parquet config: `idx, question, choices, answer, image_1..image_4, prompt`."""
    import pyarrow as pa

    tasks = ["Jigsaw", "Relative_Depth", "Spatial_Relation"]
    rows = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        row = {"idx": f"{split}_{task}_{i}", "question": f"Which point is closer? ({i})",
               "choices": ["(A) first", "(B) second"],
               "answer": "?" if split == "test" else ["(A)", "(B)"][i % 2],
               "prompt": f"Which point is closer? ({i})\nSelect from the following choices.\n(A) first\n(B) second"}
        for k in range(1, 5):
            row[f"image_{k}"] = {"bytes": png_bytes(100 * i + k), "path": f"{i}_{k}.png"} if k <= images else None
        rows.append(row)
    image = _image_type()
    schema = pa.schema([("idx", pa.string()), ("question", pa.string()), ("choices", pa.list_(pa.string())),
                        ("answer", pa.string()), *((f"image_{k}", image) for k in range(1, 5)),
                        ("prompt", pa.string())])
    return _parquet(path, rows, schema)


BLINDTEST_ROWS = [("Line Plot Intersections", "2"), ("Touching Circles", "Yes"), ("Circled Letter", "o"),
                  ("Subway Connections", "1"), ("Nested Squares", "4"), ("Counting Grid - Blank Grids", "5,6")]


def write_blindtest(path: Path, n: int) -> Path:
    """A BlindTest parquet: `task, image, prompt, groundtruth, metadata` (strings except `image`)."""
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


def write_hallusionbench(folder: Path, n: int) -> Path:
    """HallusionBench.json; every fourth question is text-only (visual_input 0, no file)."""
    items = []
    for i in range(n):
        visual = "0" if i % 4 == 3 else "1"
        rel = _image_file(folder, f"hallusion_bench/VD/illusion/{i}_0.png", i) if visual == "1" else None
        items.append({"category": "VD", "subcategory": "illusion", "visual_input": visual, "set_id": str(i),
                      "figure_id": "0", "sample_note": "", "question_id": "0",
                      "question": f"Is the left line longer than the right one ({i})?",
                      "gt_answer_details": "They are equal.", "gt_answer": str(i % 2), "filename": rel})
    path = folder / "HallusionBench.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(items))
    return path


def write_illusionvqa(path: Path, n: int) -> Path:
    """An IllusionVQA parquet: `image, question, options, answer` (answer = option text), `category`, `id`."""
    import pyarrow as pa

    rows = [{"image": {"bytes": png_bytes(i), "path": f"{i}.png"}, "question": f"What is unusual ({i})?",
             "options": ["nothing", "the stairs loop", "the colours", "the size"],
             "answer": ["nothing", "the stairs loop", "the colours", "the size"][i % 4],
             "category": "impossible object", "id": i} for i in range(n)]
    schema = pa.schema([("image", _image_type()), ("question", pa.string()), ("options", pa.list_(pa.string())),
                        ("answer", pa.string()), ("category", pa.string()), ("id", pa.int64())])
    return _parquet(path, rows, schema)
