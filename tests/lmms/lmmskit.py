"""Offline lmms-eval runs for the tests: local copies of BlindTest and BLINK items, task YAMLs that include
lmms-eval's own task files (so its prompts and scoring are used unchanged), the `trompe` entry point, and a runner.

- BlindTest: HF XAI/vlmsareblind, split `valid`, columns `task, image, prompt, groundtruth, metadata` (dataset
  card; lmms_eval/tasks/vlmsareblind/vlmsareblind.yaml of lmms-eval 0.7.3 reads split `valid` of that repo); the
  `task` values lmms-eval lists (utils.py TASKS) with the prompts of the paper's appendix (arXiv 2407.06581).
- BLINK: HF BLINK-Benchmark/BLINK, one config per subtask, split `val`, columns `idx` ("val_Jigsaw_1"),
  `question`, `sub_task`, `image_1`..`image_4` (unused ones null), `choices`, `answer` ("(A)"), `prompt`,
  `explanation` (dataset card; lmms_eval/tasks/blink/_default_template_yaml reads split `val`).
The parquet files carry the `huggingface` schema metadata the hub's files carry, so `datasets` decodes the image
columns to PIL images as it does for the real files. Every question holds "[item N]" for the scripted model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import lmms_eval
from trompe_agents.testing.dataset_files import png_bytes

HERE = Path(__file__).parent
TASKS = Path(lmms_eval.__file__).parent / "tasks"
ENTRY_POINT = "trompe = trompe_agents.illusion.lmms.manifest:MANIFEST"

# N: (HF task, prompt, groundtruth, the scripted reply; None: no answer at all)
BLINDTEST = {
    0: ("Line Plot Intersections", "How many times do the blue and red line plots cross each other? Answer with a "
        "number in curly brackets, e.g., {5}.", "2", "{2}"),
    1: ("Touching Circles", "Are the two circles touching each other? Answer with Yes/No.", "Yes", "Yes"),
    2: ("Circled Letter", "Which letter is being circled? Answer with a letter in curly brackets, e.g., {a}.", "o",
        "{O}"),
    3: ("Olympic Counting - Circles", "How many circles are in the image? Answer with only the number in numerical "
        "format.", "5", "5"),
    4: ("Olympic Counting - Pentagons", "How many pentagons are in the image? Answer with only the number in "
        "numerical format in curly brackets e.g. {3}.", "6", "{7}"),
    5: ("Nested Squares", "Count the total number of squares in the image. Answer with only the number in "
        "numerical format in curly brackets e.g. {3}.", "4", "{4}"),
    6: ("Counting Grid - Blank Grids", "Count the number of rows and columns and answer with numbers in curly "
        "brackets. For example, rows={5} columns={6}", "5,6", "rows={5} columns={6}"),
    7: ("Counting Grid - Word Grids", "Count the number of rows and columns and answer with numbers in curly "
        "brackets. For example, rows={5} columns={6}", "5,6", "rows={6} columns={5}"),
    8: ("Subway Connections", "How many single-colored paths go from A to C? Answer with a number in curly "
        "brackets, e.g., {3}.", "1", "{3}"),  # the only Subway item, wrong: a task with no right answer
    9: ("Line Plot Intersections", "How many times do the blue and red line plots cross each other? Answer with a "
        "number in curly brackets, e.g., {5}.", "3", None),
    10: ("Touching Circles", "Are the two circles touching each other? Answer with Yes/No.", "No", "No"),
    11: ("Nested Squares", "Count the total number of squares in the image. Answer with only the number in "
         "numerical format in curly brackets e.g. {3}.", "5", "{3}"),
}
# N: (subtask, answer, the scripted reply; None: no answer at all)
BLINK = {20: ("Relative_Depth", "(A)", "(A)"), 21: ("Relative_Depth", "(B)", "B"), 22: ("Relative_Depth", "(B)", "(A)"),
         23: ("Relative_Depth", "(A)", None), 24: ("Jigsaw", "(A)", "(A)"), 25: ("Jigsaw", "(B)", "(B)"),
         26: ("Jigsaw", "(A)", "A"), 27: ("Jigsaw", "(B)", "(A)")}
REPLIES = {n: item[-1] for n, item in (BLINDTEST | BLINK).items() if item[-1] is not None}
BLINK_SUBTASKS = ("Relative_Depth", "Jigsaw")


def _image(k: int) -> dict:
    return {"bytes": png_bytes(k), "path": None}


def _write(path: Path, rows: list[dict], features) -> Path:
    """A parquet file as the hub serves it: `datasets` writes the features into the schema metadata."""
    from datasets import Dataset

    path.parent.mkdir(parents=True, exist_ok=True)
    Dataset.from_list(rows, features=features).to_parquet(str(path))
    return path


def write_blindtest(path: Path) -> Path:
    from datasets import Features, Image, Value

    rows = [{"task": task, "image": _image(n), "prompt": f"{prompt} [item {n}]", "groundtruth": truth,
             "metadata": json.dumps({"item": n})} for n, (task, prompt, truth, _) in BLINDTEST.items()]
    features = Features({"task": Value("string"), "image": Image(), "prompt": Value("string"),
                         "groundtruth": Value("string"), "metadata": Value("string")})
    return _write(path, rows, features)


def write_blink(path: Path, subtask: str) -> Path:
    from datasets import Features, Image, Sequence, Value

    rows = []
    for n, (task, answer, _) in BLINK.items():
        if task != subtask:
            continue
        question = f"Which of the two marked points is closer to the camera? [item {n}]"
        rows.append({"idx": f"val_{task}_{n}", "question": question, "sub_task": task, "image_1": _image(n),
                     "image_2": _image(100 + n), "image_3": None, "image_4": None, "choices": ["(A)", "(B)"],
                     "answer": answer, "prompt": f"{question}\nSelect from the following choices.\n(A) A\n(B) B",
                     "explanation": ""})
    features = Features({"idx": Value("string"), "question": Value("string"), "sub_task": Value("string"),
                         **{f"image_{k}": Image() for k in range(1, 5)}, "choices": Sequence(Value("string")),
                         "answer": Value("string"), "prompt": Value("string"), "explanation": Value("string")})
    return _write(path, rows, features)


def blink_task(subtask: str) -> str:
    return f"trompe_check_blink_{subtask.lower()}"


def write_tasks(folder: Path) -> Path:
    """The data files and a task folder for --include_path: each YAML includes lmms-eval's own task file and only
    points it at the local file (dataset_path parquet: lmms-eval resolves data_files beside the YAML)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_blindtest(folder / "blindtest.parquet")
    (folder / "trompe_check_blindtest.yaml").write_text(
        f"include: {TASKS / 'vlmsareblind' / 'vlmsareblind.yaml'}\ntask: trompe_check_blindtest\n"
        "dataset_path: parquet\ndataset_kwargs:\n  data_files:\n    valid: blindtest.parquet\n")
    for subtask in BLINK_SUBTASKS:
        write_blink(folder / "blink" / subtask / "val-00000-of-00001.parquet", subtask)  # the hub's layout
        (folder / f"{blink_task(subtask)}.yaml").write_text(
            f"include: {TASKS / 'blink' / ('blink_' + subtask.lower() + '.yaml')}\ntask: {blink_task(subtask)}\n"
            f"tag: trompe_check\ndataset_path: parquet\ndataset_name: null\ndataset_kwargs:\n  data_files:\n"
            f"    val: blink/{subtask}/val-00000-of-00001.parquet\n")
    (folder / "trompe_check_blink.yaml").write_text(
        "group: trompe_check_blink\ntask:\n" + "".join(f"  - {blink_task(s)}\n" for s in BLINK_SUBTASKS)
        + "aggregate_metric_list:\n  - metric: blink_acc\n")
    return folder


def entry_point_folder(folder: Path) -> Path:
    """A distribution's metadata declaring trompe's `lmms_eval.models` entry point (as pyproject.toml does), for
    a checkout installed before the entry point was added: lmms-eval finds it through importlib.metadata."""
    info = folder / "trompe_lmms_entry_point-0.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: trompe-lmms-entry-point\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(f"[lmms_eval.models]\n{ENTRY_POINT}\n")
    return folder


def offline_env(tmp: Path) -> dict[str, str]:
    """No hub, no network, caches in the test's folder; the scripted model and the entry point on the path."""
    path = [str(HERE), str(entry_point_folder(tmp / "entry")), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "HF_HOME": str(tmp / "hf"), "WANDB_MODE": "disabled", "TOKENIZERS_PARALLELISM": "false"}


def run_lmms_eval(tmp: Path, tasks: str, model_args: str, include: Path, out: Path) -> subprocess.CompletedProcess:
    """`lmms-eval --model trompe` as a user runs it (the console script of this environment)."""
    command = [str(Path(sys.executable).parent / "lmms-eval"), "--model", "trompe", "--model_args", model_args,
               "--tasks", tasks, "--include_path", str(include), "--output_path", str(out), "--log_samples",
               "--verbosity", "WARNING"]
    return subprocess.run(command, env=offline_env(tmp), capture_output=True, text=True, timeout=280, cwd=tmp)


def results(out: Path) -> tuple[dict, dict[str, list[dict]]]:
    """lmms-eval's results file and its samples logs (task -> lines), wherever it put them under `out`."""
    [found] = sorted(out.rglob("*_results.json"))
    samples = {}
    for path in sorted(out.rglob("*_samples_*.jsonl")):
        task = path.stem.split("_samples_", 1)[1]
        samples[task] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return json.loads(found.read_text()), samples
