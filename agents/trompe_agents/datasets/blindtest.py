"""BlindTest (HF XAI/vlmsareblind): parquet rows `task, image, prompt, groundtruth, metadata`; scored as the
paper reports it, as lmms-eval's `vlmsareblind` and as VLMEvalKit's `VLMBlind` do."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from ..records import SampleResult
from ..replies import integer_text
from .base import DatasetError, ListDataset, Sample
from .benchmark import Benchmark, Columns, SevexTask
from .forms import extract, normalise, same_answer
from .harness import OFFICIAL, Score, macro, micro, per_group, reply
from .parquet import images_folder, read_rows, write_image

NAME = "blindtest"

COLUMNS = ["task", "image", "prompt", "groundtruth"]
# HF `task` values and the BlindTest repo's generator names, keyed without case or punctuation, mapped to the
# task names SEVEX reports (and the probe families use). SEVEX's "OverlappingShapes" is the two-circle task.
TASK_NAMES = {
    "lineplotintersections": "LineIntersections", "lineintersection": "LineIntersections",
    "lineintersections": "LineIntersections",
    "circledletter": "CircledLetter", "circledword": "CircledLetter",
    "subwayconnections": "SubwayMap", "subwaymap": "SubwayMap",
    "touchingcircles": "OverlappingShapes", "touchingcircle": "OverlappingShapes",
    "overlappingshapes": "OverlappingShapes",
    "nestedsquares": "NestedSquares",
    "countinggridblankgrids": "CountingRowsAndColumns", "countinggridwordgrids": "CountingRowsAndColumns",
    "countingrowsandcolumns": "CountingRowsAndColumns", "countinggrid": "CountingRowsAndColumns",
    "olympiccountingcircles": "CountingCircles", "olympiccountingpentagons": "CountingCircles",
    "countingcircles": "CountingCircles",
}


# The answer each task's prompt asks for (HF XAI/vlmsareblind `prompt`: "{3}", "Yes/No", "{a}", rows={5} columns={6}).
ANSWER_TYPES = {"LineIntersections": "integer", "CircledLetter": "letter", "SubwayMap": "integer",
                "OverlappingShapes": "yesno", "NestedSquares": "integer", "CountingRowsAndColumns": "pair",
                "CountingCircles": "integer"}


def task_name(task: str) -> str:
    """SEVEX's name for a BlindTest task; unknown tasks keep their own name."""
    return TASK_NAMES.get(re.sub(r"[^a-z]", "", task.lower()), task)


def load_blindtest(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    folder = images_folder(images_root, NAME, path)
    samples = []
    rows, _ = read_rows(path, COLUMNS, split, BENCHMARK.evaluation_split)
    for i, (where, row) in enumerate(rows):
        sample_id = f"{task_name(str(row['task']))}-{i:05d}"
        image = write_image(row["image"], folder, f"{where} (task {row['task']!r}), image")
        try:
            gt = row["groundtruth"]
            answer = normalise("auto", gt, name=NAME) if gt not in (None, "") else None
        except ValueError:
            raise DatasetError(f"{where}: groundtruth {row['groundtruth']!r} cannot be read") from None
        meta = row.get("metadata")
        try:
            meta = json.loads(meta) if isinstance(meta, str) else meta
        except ValueError:
            pass  # free text metadata is kept as it is
        samples.append(Sample(id=sample_id, images=[image], question=row["prompt"], answer=answer,
                              category=task_name(str(row["task"])),
                              answer_type=ANSWER_TYPES.get(task_name(str(row["task"]))),
                              metadata={"task": row["task"], "groundtruth": row["groundtruth"],
                                        "metadata": meta}))
    return ListDataset(NAME, samples)


def detect(path: Path, columns: Columns) -> bool:
    return (path.suffix == ".parquet" or path.is_dir()) and {"task", "groundtruth"} <= columns.names


def render(answer: str, kind: str) -> str:
    """An answer as BlindTest's prompts ask for it: "{2}", "{o}", "rows={5} columns={6}"."""
    if pair := re.fullmatch(r"(\d+),(\d+)", answer):
        return f"rows={{{pair.group(1)}}} columns={{{pair.group(2)}}}"
    return f"{{{answer}}}"


PAPER_GROUPS = {"countinggridblankgrids": "Counting Grid", "countinggridwordgrids": "Counting Grid"}


def hf_task(record: SampleResult) -> str:
    """The HF `task` ("Counting Grid - Word Grids"); trompe's task name for records of other sources."""
    return str(record.keys.get("task") or record.category or "-")


def _gold_text(record: SampleResult) -> str:
    return str(record.keys.get("groundtruth") if record.keys.get("groundtruth") is not None
               else record.label or "")


def official(records: list[SampleResult]) -> Score:
    """BlindTest as the paper reports it (Rahmanzadehgervi et al., ACCV 2024, Table 1; VLMsAreBlind/Benchmark
    README.md at bbfc1bf): accuracy per task over 8 tasks (the two Counting Grid tasks are one, the two Olympic
    counting tasks are two), and their mean. The authors publish no scorer; replies are read by trompe's
    extractor for the gold answer's form (forms.py `auto`; circled letters without case)."""
    rights: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        task = hf_task(record)
        text = reply(record, render)
        right = False
        if text is not None:  # the form-level reading (answers.states_answer's, in `auto`)
            gold = normalise("auto", str(record.label))
            right = same_answer(extract("auto", text, expected=gold), gold)
        rights[PAPER_GROUPS.get(re.sub(r"[^a-z]", "", task.lower()), task)].append(right)
    groups = per_group(rights)
    return Score(OFFICIAL, "VLMs Are Blind, Table 1: accuracy per task (8 tasks), mean over tasks", {
        "mean over tasks": macro(groups), "accuracy": micro(groups)}, groups)


LMMS_NUMBER_TASKS = ("line plot intersections", "subway connections", "olympic counting - circles",
                     "olympic counting - pentagons", "nested squares")
LMMS_TASK_MAP = {"counting grid - blank grids": "counting grid", "counting grid - word grids": "counting grid"}
LMMS_GRID = [re.compile(r"\{(\d+)\}\s*\{(\d+)\}"), re.compile(r"\((\d+)\s*,\s*(\d+)\)"),
             re.compile(r"rows=\{(\d+)\}\scolumns=\{(\d+)\}")]


def lmms_blindtest_parse(text: str, task: str) -> str | None:
    """lmms-eval's reading of one reply (lmms_eval/tasks/vlmsareblind/utils.py `parse_response`)."""
    text, task = text.strip().lower(), task.lower()
    if task == "touching circles":
        return text if text in ("yes", "no") else None  # the whole reply must be the word
    if task in LMMS_NUMBER_TASKS:
        found = re.search(r"\{?(\d+)\}?", text)  # the first number anywhere
        return found.group(1) if found else None
    if task == "circled letter":
        found = re.search(r"\{?([a-z])\}?", text)  # the first letter anywhere, braces or not
        return found.group(1) if found else None
    if task.startswith("counting grid"):
        for pattern in LMMS_GRID:
            if found := pattern.search(text):
                return f"{found.group(1)},{found.group(2)}"
    return None


def lmms_blindtest_right(record: SampleResult) -> bool:
    """One item as `vlmsareblind_process_results` scores it: the parsed reply equals the lowercased groundtruth."""
    text = reply(record, render)
    parsed = lmms_blindtest_parse(text, hf_task(record)) if text is not None else None
    return parsed is not None and parsed.strip().lower() == _gold_text(record).strip().lower()


def lmms_eval(records: list[SampleResult]) -> Score:
    """lmms-eval `vlmsareblind` (lmms_eval/tasks/vlmsareblind/utils.py of lmms-eval 0.7.3, the version the
    `lmms-eval` extra pins and tests/lmms/test_lmms_cross_check.py runs): `parse_response` per task on the
    lowercased reply, equal to the lowercased `groundtruth`; tasks grouped by TASK_MAP (the two Counting Grid
    tasks are one: 8 tasks); `task_mean` averages every task with an item (`vlmsareblind_aggregate_by_task`;
    commit 75571cf averaged only the tasks with a right answer); `accuracy` is the mean over items."""
    totals: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        task = hf_task(record)
        totals[LMMS_TASK_MAP.get(task.lower(), task.lower())].append(lmms_blindtest_right(record))
    groups = per_group(totals)
    items = [r for v in totals.values() for r in v]
    return Score("lmms-eval", "lmms-eval 0.7.3 vlmsareblind utils.py: task_mean over tasks", {
        "task_mean": macro(groups), "accuracy": sum(items) / len(items) if items else 0.0}, groups)


# VLMEvalKit's searches, each tried only where its answer is decided, so that a hostile reply costs linear time:
# `\{(.*?)\}` from the first '{' of each line (a later '{' on the line reaches the same '}' or none), and
# `[Rr]ows?(?:[^{}]*)\{(\d+)\}` from the first "row" after each brace (every "row" before the same brace reaches
# the same "{N}" or none); tried from every '{' or "row", they rescanned the rest of the line or text: quadratic.
FIRST_BRACES = re.compile(r"(?:^|\n)[^{\n]*\{([^}\n]*)\}")
VLMEVAL_ROWS = re.compile(r"(?:^|[{}])(?>[^{}]*?[Rr]ow)[^{}]*\{(\d+)\}")
VLMEVAL_COLUMNS = re.compile(r"(?:^|[{}])(?>[^{}]*?[Cc]olumn)[^{}]*\{(\d+)\}")
VLMEVAL_PAIR = re.compile(r"\((\d+),\s*(\d+)\)")


def _first_braces(text: str) -> str:
    found = FIRST_BRACES.search(text)
    return found.group(1) if found else ""


def _vlmeval_grid(text: str, gold: str) -> bool:
    """`compare_string_with_values`; a number of more than MAX_NUMBER_DIGITS digits is no count (int() of 4,300+
    digits raises)."""
    try:
        wanted = [str(int(x.strip())) for x in gold.split(",")]
    except ValueError:
        return False
    if len(wanted) != 2:
        return False
    rows, columns = VLMEVAL_ROWS.search(text), VLMEVAL_COLUMNS.search(text)
    if rows and columns:
        said = [rows.group(1), columns.group(1)]
    elif pair := VLMEVAL_PAIR.search(text):
        said = list(pair.groups())
    else:
        return False
    return [integer_text(digits) for digits in said] == wanted


VLMEVAL_BLIND: dict[str, Callable[[str, str], bool]] = {
    "Subway Connections": lambda text, gold: _first_braces(text) == gold,
    "Nested Squares": lambda text, gold: _first_braces(text) == gold,
    "Line Plot Intersections": lambda text, gold: _first_braces(text) == gold,
    "Circled Letter": lambda text, gold: _first_braces(text) == gold,
    "Touching Circles": lambda text, gold: gold.lower() in text.lower(),
    "Counting Grid - Word Grids": _vlmeval_grid,
    "Counting Grid - Blank Grids": _vlmeval_grid,
    "Olympic Counting - Pentagons": lambda text, gold: gold in text,
    "Olympic Counting - Circles": lambda text, gold: gold in text,
}


def vlmevalkit(records: list[SampleResult]) -> Score:
    """VLMEvalKit `VLMBlind` (open-compass/VLMEvalKit vlmeval/dataset/image_mcq.py at e8e78f0, `evaluate`):
    accuracy per HF task, 9 tasks, none merged; the first {...} of the reply equals the answer exactly (subway,
    nested squares, line intersections, circled letter, case kept), the answer is a substring of the reply
    (touching circles without case, Olympic counting with case), rows/columns by `compare_string_with_values`.
    A task outside that list is counted but never right. VLMEvalKit prints only the per-task table; the mean
    over tasks shown first is that table's plain mean. The TSV's `answers` column is read as HF `groundtruth`."""
    rights: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        task = hf_task(record)
        text = reply(record, render)
        rule = VLMEVAL_BLIND.get(task)
        rights[task].append(text is not None and rule is not None and rule(text, _gold_text(record)))
    groups = per_group(rights)
    return Score("vlmevalkit", "VLMEvalKit VLMBlind.evaluate: accuracy per task (9 tasks)", {
        "mean over tasks": macro(groups)}, groups)


_COUNT = "a number in curly brackets, e.g. {2}"
_TOUCHING = ("Two circles are drawn; say whether they touch or overlap.", "Yes or No in curly brackets, e.g. {Yes}",
             ("OverlappingShapes", "TouchingCircles"))

BENCHMARK = Benchmark(
    NAME, load_blindtest, "BlindTest (VLMs Are Blind): counts, letters and yes/no, per-task accuracy (parquet)",
    detect=detect, detection_rank=1,  # TeT's columns hold BlindTest's too
    answer_form="auto", render=render, evaluation_split="valid",
    scorers={OFFICIAL: official, "lmms-eval": lmms_eval, "vlmevalkit": vlmevalkit},
    record_keys=("task", "groundtruth"),
    sevex_tasks=(
        SevexTask("LineIntersections", "Two piecewise-linear functions are drawn as coloured lines; count how many "
                  "times they intersect (0, 1 or 2).", _COUNT, ("LineIntersections",)),
        SevexTask("CircledLetter", "A word is shown with one letter circled in red; name the circled letter.",
                  "the letter in curly brackets, e.g. {k}", ("CircledLetter",)),
        SevexTask("SubwayMap", "A subway-like map draws coloured paths between stations; count the single-colour "
                  "paths between two named stations.", _COUNT, ("SubwayMap",)),
        SevexTask("OverlappingShapes", *_TOUCHING),
        SevexTask("TouchingCircles", *_TOUCHING),
        SevexTask("NestedSquares", "Squares are drawn nested inside each other; count them.", _COUNT,
                  ("NestedSquares",)),
        SevexTask("CountingRowsAndColumns", "A grid is drawn; count its rows and columns.",
                  "rows and columns in curly brackets, e.g. {3} {4}", ("CountingRowsAndColumns",)),
    ),
    inspect_task=NAME)
