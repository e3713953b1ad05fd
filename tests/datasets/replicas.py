"""Replicas of public benchmark files with their real columns, task names, prompts and gold-answer forms.

- BlindTest: HF XAI/vlmsareblind, split `valid`, columns `task, image, prompt, groundtruth, metadata`; the nine
  `task` values lmms-eval lists (lmms_eval/tasks/vlmsareblind/utils.py TASKS, commit 75571cf) with the prompts
  of the paper's appendix (arXiv 2407.06581), which ask for "{N}", "Yes/No", "{a}" and "rows={5} columns={6}";
  gold counts are digits, the two-circle gold "Yes"/"No", the grid gold "rows,columns", letters lowercase.
- TeT colorblindhard: ziplab/DDP "asset/TeT benchmark/colorblindhard-00000-of-00001.parquet" (commit 684032b):
  `idx` "C001", the one question text asking for \\box{..}, two-character `groundtruth`, `task`
  "colorblindhard" (the shipped file has no image bytes; the replica carries them so the items can run).
"""

from __future__ import annotations

import json
from pathlib import Path

from trompe_agents.testing.dataset_files import _image_type, _parquet, png_bytes

# (HF task, prompt, groundtruth): one gold answer per task, so a scripted model can answer every item right.
BLINDTEST_TASKS = [
    ("Line Plot Intersections", "How many times do the blue and red line plots cross each other? Answer with a "
     "number in curly brackets, e.g., {5}.", "2"),
    ("Touching Circles", "Are the two circles touching each other? Answer with Yes/No.", "Yes"),
    ("Circled Letter", "Which letter is being circled? Answer with a letter in curly brackets, e.g., {a}.", "o"),
    ("Olympic Counting - Circles", "How many circles are in the image? Answer with only the number in numerical "
     "format.", "5"),
    ("Olympic Counting - Pentagons", "How many pentagons are in the image? Answer with only the number in "
     "numerical format in curly brackets e.g. {3}.", "6"),
    ("Nested Squares", "Count the total number of squares in the image. Answer with only the number in "
     "numerical format in curly brackets e.g. {3}.", "4"),
    ("Counting Grid - Blank Grids", "Count the number of rows and columns and answer with numbers in curly "
     "brackets. For example, rows={5} columns={6}", "5,6"),
    ("Counting Grid - Word Grids", "Count the number of rows and columns and answer with numbers in curly "
     "brackets. For example, rows={5} columns={6}", "5,6"),
    ("Subway Connections", "How many single-colored paths go from A to C? Answer with a number in curly "
     "brackets, e.g., {3}.", "1"),
]
TET_QUESTION = ("You are given an image. Please identify the characters in this image. Your final answer should "
                "be enclosed in \\box{} (e.g., \\box{DK}).")


def write_blindtest_hf(path: Path, per_task: int = 2) -> Path:
    """`per_task` rows of each of the nine HF tasks."""
    import pyarrow as pa

    rows = [{"task": task, "image": {"bytes": png_bytes(9 * k + i), "path": None}, "prompt": prompt,
             "groundtruth": truth, "metadata": json.dumps({"k": k})}
            for k in range(per_task) for i, (task, prompt, truth) in enumerate(BLINDTEST_TASKS)]
    schema = pa.schema([("task", pa.string()), ("image", _image_type()), ("prompt", pa.string()),
                        ("groundtruth", pa.string()), ("metadata", pa.string())])
    return _parquet(path, rows, schema)


def write_colorblindhard(path: Path, n: int) -> Path:
    """`n` colorblindhard rows, every gold "EJ"."""
    import pyarrow as pa

    rows = [{"idx": f"C{i + 1:03d}", "question": TET_QUESTION,
             "image": {"bytes": png_bytes(i), "path": f"C{i + 1:03d}.png"}, "groundtruth": "EJ",
             "task": "colorblindhard"} for i in range(n)]
    schema = pa.schema([("idx", pa.string()), ("question", pa.string()), ("image", _image_type()),
                        ("groundtruth", pa.string()), ("task", pa.string())])
    return _parquet(path, rows, schema)


def write_vlmevalkit_tsv(path: Path, n: int) -> Path:
    """A VLMEvalKit multiple-choice TSV (open-compass/VLMEvalKit vlmeval/dataset/image_base.py at e8e78f0):
    `index, image, question, hint, A, B, C, D, answer, category`, tab-separated as pandas writes it; the image a
    base64 PNG, except that every third row names the row before it (a shared image); odd rows have two
    options (C and D empty); the answer cycles over the options."""
    import base64
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter="\t")
        writer.writerow(["index", "image", "question", "hint", "A", "B", "C", "D", "answer", "category"])
        for i in range(n):
            image = str(i - 1) if i % 3 == 2 else base64.b64encode(png_bytes(i)).decode()
            options = ["red", "green", "blue", "grey"] if i % 2 == 0 else ["left", "right", "", ""]
            count = 4 if i % 2 == 0 else 2
            writer.writerow([i, image, f"Which colour is the disc ({i})?", "Look closely." if i == 0 else "",
                             *options, "ABCD"[i % count], ["colour", "position"][i % 2]])
    return path
