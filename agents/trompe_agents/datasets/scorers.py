"""Each benchmark's numbers as a named harness computes them: same extraction, task grouping and aggregation.

A scorer reads one reply per result record: the record's `reply` (raw text, e.g. imported from another harness's
output) or else the agent's answer written in the form the item's prompt asks for (`render`: BlindTest "{2}",
"rows={5} columns={6}", "{o}", "Yes"; BLINK "(B)"; other options "B"), so every harness reads a trompe run as
it would read a model that followed the prompt. A record without an answer (a failed sample) is a wrong reply.

`official` is the benchmark's own scorer and the default; `lmms-eval` and `vlmevalkit` exist where those
harnesses score differently. Each scorer's docstring names the file and commit it follows; the code is written
from those rules, not copied. Headline numbers are fractions (0-1); harnesses that print percentages print 100x.
"""

from __future__ import annotations

import re
import string
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins

from ..records import SampleResult
from ..replies import integer_text
from . import blink_match, vlmeval_match
from .vlmeval_match import vlmeval_yes_no
from .answers import extract, is_correct

OFFICIAL = "official"
Record = dict[str, Any]


@dataclass
class Score:
    """What a scorer computes: its headline numbers, per-group accuracy (name, accuracy, items) and its source."""

    scorer: str
    rule: str
    headline: dict[str, float] = field(default_factory=dict)
    groups: list[tuple[str, float, int]] = field(default_factory=list)
    scored_ids: frozenset[str] | None = None  # the records it read, where it reads fewer than it was given


# ---------------------------------------------------------------- replies and keys


def _keys(record: Record) -> dict[str, Any]:
    return record.get("keys") or {}


def render(record: Record, fmt: str | None) -> str | None:
    """The agent's answer written as the item's prompt asks, for a harness to read; None without an answer."""
    result = SampleResult.from_json(record)
    if result.failed:  # no model answer (an old run's invented default included): nothing to read
        return None
    answer, kind = str(result.answer), str(record.get("answer_type") or "")
    if kind == "yesno" or answer.lower() in ("yes", "no") and not kind:
        return answer.capitalize()
    if fmt == "blindtest":
        if pair := re.fullmatch(r"(\d+),(\d+)", answer):
            return f"rows={{{pair.group(1)}}} columns={{{pair.group(2)}}}"
        return f"{{{answer}}}"
    if kind.startswith("choice") and fmt == "blink":
        return f"({answer})"
    return answer


def reply(record: Record, fmt: str | None) -> str | None:
    """The text a harness scores: the raw reply when the record holds one, else the rendered answer."""
    raw = record.get("reply")
    return raw if isinstance(raw, str) else render(record, fmt)


def _per_group(rights: dict[str, list[bool]]) -> list[tuple[str, float, int]]:
    return [(name, sum(v) / len(v), len(v)) for name, v in sorted(rights.items())]


def _macro(groups: list[tuple[str, float, int]]) -> float:
    return sum(a for _, a, _ in groups) / len(groups) if groups else 0.0


def _micro(groups: list[tuple[str, float, int]]) -> float:
    total = sum(k for _, _, k in groups)
    return sum(a * k for _, a, k in groups) / total if total else 0.0


# ---------------------------------------------------------------- BlindTest

PAPER_GROUPS = {"countinggridblankgrids": "Counting Grid", "countinggridwordgrids": "Counting Grid"}


def _hf_task(record: Record) -> str:
    """The HF `task` ("Counting Grid - Word Grids"); trompe's task name for records of other sources."""
    return str(_keys(record).get("task") or record.get("category") or "-")


def _gold_text(record: Record) -> str:
    return str(_keys(record).get("groundtruth") if _keys(record).get("groundtruth") is not None
               else record.get("label") or "")


def blindtest_official(records: list[Record]) -> Score:
    """BlindTest as the paper reports it (Rahmanzadehgervi et al., ACCV 2024, Table 1; VLMsAreBlind/Benchmark
    README.md at bbfc1bf): accuracy per task over 8 tasks (the two Counting Grid tasks are one, the two Olympic
    counting tasks are two), and their mean. The authors publish no scorer; replies are read by trompe's
    extractor for the gold answer's form (answers.py `blindtest`; circled letters without case)."""
    rights: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        task = _hf_task(record)
        text = reply(record, "blindtest")
        right = text is not None and is_correct("blindtest", text, str(record["label"]))
        rights[PAPER_GROUPS.get(re.sub(r"[^a-z]", "", task.lower()), task)].append(right)
    groups = _per_group(rights)
    return Score(OFFICIAL, "VLMs Are Blind, Table 1: accuracy per task (8 tasks), mean over tasks", {
        "mean over tasks": _macro(groups), "accuracy": _micro(groups)}, groups)


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


def lmms_blindtest_right(record: Record) -> bool:
    """One item as `vlmsareblind_process_results` scores it: the parsed reply equals the lowercased groundtruth."""
    text = reply(record, "blindtest")
    parsed = lmms_blindtest_parse(text, _hf_task(record)) if text is not None else None
    return parsed is not None and parsed.strip().lower() == _gold_text(record).strip().lower()


def blindtest_lmms_eval(records: list[Record]) -> Score:
    """lmms-eval `vlmsareblind` (lmms_eval/tasks/vlmsareblind/utils.py of lmms-eval 0.7.3, the version the
    `lmms-eval` extra pins and tests/lmms/test_lmms_cross_check.py runs): `parse_response` per task on the
    lowercased reply, equal to the lowercased `groundtruth`; tasks grouped by TASK_MAP (the two Counting Grid
    tasks are one: 8 tasks); `task_mean` averages every task with an item (`vlmsareblind_aggregate_by_task`;
    commit 75571cf averaged only the tasks with a right answer); `accuracy` is the mean over items."""
    totals: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        task = _hf_task(record)
        totals[LMMS_TASK_MAP.get(task.lower(), task.lower())].append(lmms_blindtest_right(record))
    groups = _per_group(totals)
    items = [r for v in totals.values() for r in v]
    return Score("lmms-eval", "lmms-eval 0.7.3 vlmsareblind utils.py: task_mean over tasks", {
        "task_mean": _macro(groups), "accuracy": sum(items) / len(items) if items else 0.0}, groups)


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


def blindtest_vlmevalkit(records: list[Record]) -> Score:
    """VLMEvalKit `VLMBlind` (open-compass/VLMEvalKit vlmeval/dataset/image_mcq.py at e8e78f0, `evaluate`):
    accuracy per HF task, 9 tasks, none merged; the first {...} of the reply equals the answer exactly (subway,
    nested squares, line intersections, circled letter, case kept), the answer is a substring of the reply
    (touching circles without case, Olympic counting with case), rows/columns by `compare_string_with_values`.
    A task outside that list is counted but never right. VLMEvalKit prints only the per-task table; the mean
    over tasks shown first is that table's plain mean. The TSV's `answers` column is read as HF `groundtruth`."""
    rights: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        task = _hf_task(record)
        text = reply(record, "blindtest")
        rule = VLMEVAL_BLIND.get(task)
        rights[task].append(text is not None and rule is not None and rule(text, _gold_text(record)))
    groups = _per_group(rights)
    return Score("vlmevalkit", "VLMEvalKit VLMBlind.evaluate: accuracy per task (9 tasks)", {
        "mean over tasks": _macro(groups)}, groups)


# ---------------------------------------------------------------- HallusionBench


def _hb_join(record: Record, *names: str) -> str:
    return "_".join(str(_keys(record).get(n)) for n in names)


def _no_figure(record: Record) -> bool:
    return _keys(record).get("category") == "VS" and str(_keys(record).get("figure_id")) == "0"


def _has_figure(record: Record) -> bool:
    return str(_keys(record).get("visual_input", "1")) != "0"


def _all_right(records: list[Record], key: Callable[[Record], str], right: dict[str, bool]) -> float:
    groups: dict[str, bool] = {}
    for record in records:
        name = key(record)
        groups[name] = groups.get(name, True) and right[record["id"]]
    return sum(groups.values()) / len(groups) if groups else 0.0


def _hallusion(records: list[Record], scorer: str, rule: str) -> Score:
    """aAcc, qAcc and fAcc with the official groups (utils.py get_eval_all, get_eval_pair_all, get_eval_fig)."""
    right = {}
    for record in records:
        text = reply(record, "hallusionbench")
        said = extract("hallusionbench", text) if text is not None else None
        # assign_correctness: an unclear answer to a VS question shown no figure counts as right
        right[record["id"]] = _no_figure(record) if said is None else said == record["label"]
    by_sub: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        by_sub[_hb_join(record, "category", "subcategory")].append(right[record["id"]])
    pair = lambda r: _hb_join(r, "category", "subcategory", "set_id", "question_id")  # noqa: E731
    figure = lambda r: _hb_join(r, "category", "subcategory", "set_id", "figure_id")  # noqa: E731
    return Score(scorer, rule, {
        "aAcc": sum(right.values()) / len(right) if right else 0.0,
        "qAcc": _all_right(records, pair, right),
        "fAcc": _all_right([r for r in records if not _no_figure(r)], figure, right)}, _per_group(by_sub),
        frozenset(str(r["id"]) for r in records))


def hallusionbench_official(records: list[Record]) -> Score:
    """HallusionBench's own scoring (tianyi-lab/HallusionBench utils.py, as lmms-eval vendors it in
    lmms_eval/tasks/hallusion_bench/utils.py at 75571cf): a question is right (1), wrong (0) or unclear (2);
    `assign_correctness` counts an unclear VS question without a figure as right; aAcc = right / questions,
    qAcc = question groups category_subcategory_set_id_question_id all right, fAcc = figure groups
    category_subcategory_set_id_figure_id all right, VS figure 0 left out. The GPT-4 correctness judge is
    replaced by trompe's yes/no reading of the reply (answers.py `yesno`; none found: unclear); with
    `--judge-backend` a model judges each reply against `gt_answer_details` instead (judges.py)."""
    return _hallusion(records, OFFICIAL, "tianyi-lab/HallusionBench utils.py (aAcc, qAcc, fAcc)")


def hallusionbench_lmms_eval(records: list[Record]) -> Score:
    """lmms-eval `hallusion_bench_image` (lmms_eval/tasks/hallusion_bench/hallusion_bench_image.yaml and
    evaluate_hb.py at 75571cf): the official rules (`hb_aggregation_result` -> assign_correctness, get_eval_all,
    get_eval_pair_all, get_eval_fig) on the `image` split only, i.e. the questions shown a figure (the yes-substring
    `*_intern` aggregations are commented out in the yaml)."""
    return _hallusion([r for r in records if _has_figure(r)], "lmms-eval",
                      "lmms-eval hallusion_bench_image: official rules on the image split")


def hallusionbench_vlmevalkit(records: list[Record]) -> Score:
    """VLMEvalKit HallusionBench (vlmeval/dataset/image_yorn.py `evaluate` and vlmeval/dataset/utils/yorn.py
    `Hallusion_rating` at e8e78f0, exact matching; `--judge-backend` adds its judge for the replies read Unknown,
    judges.py): the reply's Yes/No/Unknown equals the answer;
    aAcc = mean, fAcc = l2-category_set_id_figure_id groups all right, qAcc = l2-category_set_id_question_id
    groups all right (l2-category is the subcategory; VD and VS are not told apart; no figure left out).
    Only questions with a figure are scored: ImageBaseDataset drops rows without an image (image_base.py
    `__init__`, skip_noimg=True)."""
    records = [r for r in records if _has_figure(r)]
    right = {}
    for record in records:
        text = reply(record, "hallusionbench")
        said = vlmeval_yes_no(text) if text is not None else "Unknown"
        right[record["id"]] = said == str(record["label"]).capitalize()
    figure = lambda r: _hb_join(r, "subcategory", "set_id", "figure_id")  # noqa: E731
    question = lambda r: _hb_join(r, "subcategory", "set_id", "question_id")  # noqa: E731
    by_sub: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        by_sub[str(_keys(record).get("subcategory"))].append(right[record["id"]])
    return Score("vlmevalkit", "VLMEvalKit Hallusion_rating (exact matching): aAcc, fAcc, qAcc", {
        "aAcc": sum(right.values()) / len(right) if right else 0.0,
        "fAcc": _all_right(records, figure, right), "qAcc": _all_right(records, question, right)},
        _per_group(by_sub), frozenset(str(r["id"]) for r in records))


# ---------------------------------------------------------------- multiple choice: BLINK, IllusionVQA, V*


def _subtask(record: Record) -> str:
    return str(record.get("category") or "-")


def _choice_score(records: list[Record], fmt: str, right: Callable[[str, Record], bool], group=_subtask,
                  ) -> list[tuple[str, float, int]]:
    rights: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        text = reply(record, fmt)
        rights[group(record)].append(text is not None and right(text, record))
    return _per_group(rights)


def blink_official(records: list[Record]) -> Score:
    """BLINK's own pipeline (zeyofu/BLINK_Benchmark at 2d6a779): the reply's option by eval/test_benchmark.py
    `analyze_answer` (commit 63137e4), its gpt-3.5 matcher replaced by `blink_match.match` (and asked through
    `--judge-backend` where that reads no option, judges.py); the prediction equals
    the "(A)"-style answer; eval/evaluate.py `eval_prediction`: accuracy per subtask, mean over subtasks."""
    def right(text: str, record: Record) -> bool:
        return blink_match.match(text, record.get("choices")).prediction == f"({record['label']})"

    groups = _choice_score(records, "blink", right)
    return Score(OFFICIAL, "BLINK eval/evaluate.py: accuracy per subtask, mean over subtasks", {
        "mean over subtasks": _macro(groups), "accuracy": _micro(groups)}, groups)


def lmms_blink_letter(text: str, options: int = 0) -> str:
    """lmms-eval's BLINK letter (lmms_eval/tasks/blink/utils.py `_extract_answer_letter`, lmms-eval 0.7.3), among
    the item's option letters (all 26 when it names none): a first line of at most four characters that is only
    the letter; else the last "answer is (X)"; else the last "(X)"; else the letter the reply starts with after
    spaces and "(". "" when none of these reads a letter."""
    letters = string.ascii_uppercase[:options] or string.ascii_uppercase
    text = text.strip()
    head = text.split("\n", 1)[0].strip()
    if len(head) <= 4 and (found := re.match(rf"^\(?([{letters}])\)?[.\s:,)]*$", head, re.IGNORECASE)):
        return found.group(1).upper()
    stated = re.findall(rf"answers?(?:\s+is)?\s*[:\-]?\s*\(?([{letters}])\)?(?![A-Za-z])", text, re.IGNORECASE)
    if stated or (stated := re.findall(rf"\(([{letters}])\)", text)):
        return stated[-1].upper()
    found = re.match(rf"[(\s]*([{letters}])[).\s]*", text, re.IGNORECASE)
    return found.group(1).upper() if found else ""


def lmms_blink_right(record: Record) -> bool:
    """One item as `blink_process_results` scores it: the letter read among the item's options is the answer's."""
    text = reply(record, "blink")
    return text is not None and lmms_blink_letter(text, len(record.get("choices") or [])) == record["label"]


def blink_lmms_eval(records: list[Record]) -> Score:
    """lmms-eval `blink` (lmms_eval/tasks/blink/utils.py `blink_process_results`, blink.yaml, lmms-eval 0.7.3):
    `_extract_answer_letter` equals the answer without brackets; accuracy per subtask task, and the group's
    `blink_acc` their unweighted mean (AggMetricConfig weight_by_size defaults to False, lmms_eval/api/group.py)."""
    groups = _choice_score(records, "blink", lambda text, r: lmms_blink_right(r))
    return Score("lmms-eval", "lmms-eval 0.7.3 blink: blink_acc, mean over subtasks", {
        "blink_acc": _macro(groups), "accuracy": _micro(groups)}, groups)


ILLUSIONVQA_MISC = ("counting", "repeating pattern", "perspective", "occlusion", "angle constancy")


def illusionvqa_official(records: list[Record]) -> Score:
    """IllusionVQA's own evaluation (csebuetnlp/IllusionVQA evaluation_code/generic_eval.ipynb at 9e1c2b8): the
    reply's first character equals the option letter (case kept); headline the total over all items; the table
    per category with counting, repeating pattern, perspective, occlusion and angle constancy merged as Misc."""
    def group(record: Record) -> str:
        category = _subtask(record)
        return "Misc" if category in ILLUSIONVQA_MISC else category

    groups = _choice_score(records, "illusionvqa", lambda text, r: text[:1] == r["label"], group)
    return Score(OFFICIAL, "IllusionVQA generic_eval.ipynb: accuracy over all items", {
        "accuracy": _micro(groups), "mean over categories": _macro(groups)}, groups)


def illusionvqa_lmms_eval(records: list[Record]) -> Score:
    """lmms-eval `illusionvqa_comprehension` (lmms_eval/tasks/illusionvqa/utils.py `MultiChoiceRegexFilter`,
    illusionvqa.yaml at 75571cf): a reply starting "X." reads as X, any other reply as itself; exact_match with
    ignore_case and ignore_punctuation against the letter (lmms_eval/api/metrics.py `exact_match_hf_evaluate`:
    spaces are kept); the mean over items."""
    def right(text: str, record: Record) -> bool:
        found = re.match(r"^\s*([A-Z])\.", text)
        said = found.group(1) if found else text
        return _no_punctuation(said).lower() == _no_punctuation(str(record["label"])).lower()  # no strip there

    groups = _choice_score(records, "illusionvqa", right)
    return Score("lmms-eval", "lmms-eval illusionvqa: exact_match over items", {"exact_match": _micro(groups)},
                 groups)


def _no_punctuation(text: str) -> str:
    return text.translate(str.maketrans("", "", string.punctuation))


def vstar_official(records: list[Record]) -> Score:
    """V* bench (penghao-wu/vstar vstar_bench_eval.py at 4ede664): accuracy per question type and `np.mean` over
    all items as the headline. The official script ranks options by likelihood; a text reply is read by
    trompe's option extractor (answers.py `choice`)."""
    groups = _choice_score(records, "vstar",
                           lambda text, r: extract("vstar", text, choices=r.get("choices")) == r["label"])
    return Score(OFFICIAL, "V* vstar_bench_eval.py: accuracy over all items", {
        "accuracy": _micro(groups), "mean over categories": _macro(groups)}, groups)


LMMS_VSTAR = [r"^([A-D])\s*[\.)\]]*", r"(?:THE\s+)?(?:ANSWER|CHOICE|OPTION)(?:\s+IS)?[\s:]+([A-D])", r"\(([A-D])\)",
              r"([A-D])\s*(?:\.|\)|])", r"(?:^|\s)([A-D])(?:\s|$)"]


def lmms_vstar_letter(text: str) -> str | None:
    """lmms-eval's V* letter (lmms_eval/tasks/vstar_bench/utils.py `extract_answer_letter`), upper-cased reply."""
    text = text.strip().upper()
    for pattern in LMMS_VSTAR:
        if found := re.search(pattern, text, re.IGNORECASE):
            return found.group(1).upper()
    letters = re.findall(r"[A-D]", text)
    if len(letters) == 1:
        return letters[0]
    return text[0] if text and text[0] in "ABCD" else None


def vstar_lmms_eval(records: list[Record]) -> Score:
    """lmms-eval `vstar_bench` (lmms_eval/tasks/vstar_bench/utils.py at 75571cf): `extract_answer_letter` equals
    the label; `vstar_overall_acc` over all items, `vstar_<category>_acc` per category."""
    groups = _choice_score(records, "vstar", lambda text, r: lmms_vstar_letter(text) == r["label"])
    return Score("lmms-eval", "lmms-eval vstar_bench: overall accuracy", {"vstar_overall_acc": _micro(groups)},
                 groups)


def _vlmeval_mcq(records: list[Record], fmt: str, name: str) -> Score:
    """ImageMCQDataset under exact matching: `can_infer` (vlmeval_match) equals the answer letter, else Z;
    vlmeval/dataset/utils/multiple_choice.py `report_acc`: Overall = mean hit over items, then per category."""
    def right(text: str, record: Record) -> bool:
        return vlmeval_match.exact_matching(text, record.get("choices")).letter == record["label"]

    groups = _choice_score(records, fmt, right)
    return Score("vlmevalkit", f"VLMEvalKit {name} (ImageMCQDataset, report_acc): Overall over items",
                 {"Overall": _micro(groups)}, groups)


def blink_vlmevalkit(records: list[Record]) -> Score:
    """VLMEvalKit `BLINK` (open-compass/VLMEvalKit vlmeval/dataset/image_mcq.py at e8e78f0: ImageMCQDataset,
    `evaluate_heuristic` -> utils/multiple_choice.py `mcq_vanilla_eval`, `extract_answer_from_item`,
    `report_acc`): the reply read by `can_infer` (utils/matching_util.py), Z where it reads nothing (the
    `exact_matching` policy; `--judge-backend` asks a model there, as `build_prompt_blink` does); hit = the
    letter equals `answer`; Overall = the mean over items, and accuracy per `category` (the subtask)."""
    return _vlmeval_mcq(records, "blink", "BLINK")


def vstar_vlmevalkit(records: list[Record]) -> Score:
    """VLMEvalKit `VStarBench` (vlmeval/dataset/image_mcq.py at e8e78f0, the same ImageMCQDataset path as BLINK
    with the generic `build_prompt` judge request): `can_infer`, else Z; Overall over items, per category."""
    return _vlmeval_mcq(records, "vstar", "VStarBench")


SCORERS: dict[str, dict[str, Callable[[list[Record]], Score]]] = {
    "blindtest": {OFFICIAL: blindtest_official, "lmms-eval": blindtest_lmms_eval,
                  "vlmevalkit": blindtest_vlmevalkit},
    "hallusionbench": {OFFICIAL: hallusionbench_official, "lmms-eval": hallusionbench_lmms_eval,
                       "vlmevalkit": hallusionbench_vlmevalkit},
    "blink": {OFFICIAL: blink_official, "lmms-eval": blink_lmms_eval, "vlmevalkit": blink_vlmevalkit},
    "illusionvqa": {OFFICIAL: illusionvqa_official, "lmms-eval": illusionvqa_lmms_eval},
    "vstar": {OFFICIAL: vstar_official, "lmms-eval": vstar_lmms_eval, "vlmevalkit": vstar_vlmevalkit},
}


@hookimpl
def register_scorers(register):
    """The built-in scorers, registered as a plugin's are."""
    for fmt, scorers in SCORERS.items():
        for name, scorer in scorers.items():
            register((fmt, name), scorer)


def registered_scorers() -> dict[str, dict[str, Callable[[list[Record]], Score]]]:
    """format -> scorer name (official first) -> scorer, the built-ins' and the installed plugins'; a pair two
    plugins register is refused naming both."""
    by_format: dict[str, dict[str, Callable[[list[Record]], Score]]] = defaultdict(dict)
    found = default_plugins().registry("register_scorers", "scorer")
    for (fmt, name), scorer in sorted(found.items(), key=lambda item: item[0][1] != OFFICIAL):
        by_format[fmt][name] = scorer
    return dict(by_format)


def scorer_names() -> list[str]:
    """Every scorer name some format offers (`--scorer` choices), official first."""
    return list(dict.fromkeys([OFFICIAL, *(name for names in registered_scorers().values() for name in names)]))


def decided_by(fmt: str | None, records: list[Record], scorer: str = OFFICIAL) -> dict[str, str]:
    """Per record id, the rule that read its reply, where a scorer has several (BLINK official: token, stated
    answer, named letter, option text, ...; `blink_match.match`; VLMEvalKit's BLINK and V*: option letter,
    option text, ...; `vlmeval_match`); empty for the others."""
    if (fmt, scorer) == ("blink", OFFICIAL):
        rule = lambda text, r: blink_match.match(text, r.get("choices")).rule  # noqa: E731
    elif fmt in ("blink", "vstar") and scorer == "vlmevalkit":
        rule = lambda text, r: vlmeval_match.exact_matching(text, r.get("choices")).rule  # noqa: E731
    else:
        return {}
    return {str(r["id"]): rule(text, r) if (text := reply(r, fmt)) is not None else "no answer"
            for r in records if r.get("label") is not None}


def scorers_for(fmt: str | None) -> list[str]:
    """The scorer names a format offers (only `official` for sets no other harness scores)."""
    return list(registered_scorers().get(fmt or "", {OFFICIAL: None}))


def check(fmt: str | None, scorer: str) -> None:
    """A clear error naming the accepted scorers when `fmt` has no scorer of that name."""
    if scorer not in scorers_for(fmt):
        raise ValueError(f"--scorer: {fmt or 'this dataset'} offers {', '.join(scorers_for(fmt))}; got {scorer!r}")


def score(fmt: str, records: list[Record], scorer: str = OFFICIAL) -> Score:
    """The named harness's numbers over labelled records of a benchmark a scorer is registered for."""
    check(fmt, scorer)
    return registered_scorers()[fmt][scorer](records)
