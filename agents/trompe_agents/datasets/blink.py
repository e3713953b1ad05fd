"""BLINK (HF BLINK-Benchmark/BLINK): parquet rows with up to four images and an "(A)"-style answer.

A snapshot holds 14 subtask configs, each with `val` and `test` files; test answers are hidden, so the
`val` split is read unless --split says otherwise (zeyofu/BLINK_Benchmark eval/evaluate.py scores val).
Its scorers: the official pipeline, lmms-eval's and VLMEvalKit's; free text is read as the official pipeline
reads it (`blink_match.match`) everywhere, SEVEX and Inspect included.
"""

from __future__ import annotations

import re
import string
from pathlib import Path

from ..records import SampleResult
from . import blink_judge, blink_match, vlmeval_mcq
from .base import DatasetError, ListDataset, Sample
from .benchmark import Benchmark, Columns, Judge, SevexTask
from .forms import normalise
from .harness import OFFICIAL, Score, choice_score, macro, micro, reply
from .parquet import images_folder, read_rows, write_image

NAME = "blink"

COLUMNS = ["idx", "question", "choices", "answer", "image_1"]


def subtask(idx: str) -> str:
    """'val_Relative_Depth_12' -> 'Relative_Depth'."""
    return re.sub(r"^(val|test)_|_\d+$", "", idx)


def load_blink(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    folder = images_folder(images_root, NAME, path)
    samples = []
    rows, chosen = read_rows(path, COLUMNS, split, BENCHMARK.evaluation_split)
    for where, row in rows:
        idx = str(row["idx"])
        where = f"{where} (idx {idx!r})"
        images = [write_image(row[f"image_{k}"], folder, f"{where}, image_{k}")
                  for k in range(1, 5) if k == 1 or row.get(f"image_{k}") is not None]
        answer = row["answer"]
        if answer in (None, "", "?", "hidden"):
            answer = None  # the test split hides its answers
        else:
            try:
                answer = normalise("choice", answer)
            except ValueError:
                raise DatasetError(f"{where}: answer {row['answer']!r} is not a letter like (A)") from None
        samples.append(Sample(id=idx, images=images, question=row["question"], answer=answer,
                              choices=list(row["choices"] or []),
                              category=row.get("sub_task") or subtask(idx),
                              metadata={"prompt": row.get("prompt"), "raw_answer": row["answer"], "split": chosen}))
    return ListDataset(NAME, samples)


def detect(path: Path, columns: Columns) -> bool:
    return (path.suffix == ".parquet" or path.is_dir()) and {"idx", "choices", "image_1"} <= columns.names


def extract(text: str, choices: list[str] | None) -> str | None:
    """The option letter BLINK's official pipeline reads in a reply ("(B)" -> "B"); None where it finds none."""
    found = blink_match.match(text, choices or None).prediction
    return found.strip("()") if found else None


def render(answer: str, kind: str) -> str:
    """An option as BLINK's prompt asks for it: "(B)"."""
    return f"({answer})" if kind.startswith("choice") else answer


def official(records: list[SampleResult]) -> Score:
    """BLINK's own pipeline (zeyofu/BLINK_Benchmark at 2d6a779): the reply's option by eval/test_benchmark.py
    `analyze_answer` (commit 63137e4), its gpt-3.5 matcher replaced by `blink_match.match` (and asked through
    `--judge-backend` where that reads no option, judges.py); the prediction equals
    the "(A)"-style answer; eval/evaluate.py `eval_prediction`: accuracy per subtask, mean over subtasks."""
    def right(text: str, record: SampleResult) -> bool:
        return blink_match.match(text, record.choices).prediction == f"({record.label})"

    groups = choice_score(records, render, right)
    return Score(OFFICIAL, "BLINK eval/evaluate.py: accuracy per subtask, mean over subtasks", {
        "mean over subtasks": macro(groups), "accuracy": micro(groups)}, groups)


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


def lmms_blink_right(record: SampleResult) -> bool:
    """One item as `blink_process_results` scores it: the letter read among the item's options is the answer's."""
    text = reply(record, render)
    return text is not None and lmms_blink_letter(text, len(record.choices or [])) == record.label


def lmms_eval(records: list[SampleResult]) -> Score:
    """lmms-eval `blink` (lmms_eval/tasks/blink/utils.py `blink_process_results`, blink.yaml, lmms-eval 0.7.3):
    `_extract_answer_letter` equals the answer without brackets; accuracy per subtask task, and the group's
    `blink_acc` their unweighted mean (AggMetricConfig weight_by_size defaults to False, lmms_eval/api/group.py)."""
    groups = choice_score(records, render, lambda text, r: lmms_blink_right(r))
    return Score("lmms-eval", "lmms-eval 0.7.3 blink: blink_acc, mean over subtasks", {
        "blink_acc": macro(groups), "accuracy": micro(groups)}, groups)


def vlmevalkit(records: list[SampleResult]) -> Score:
    """VLMEvalKit `BLINK` (open-compass/VLMEvalKit vlmeval/dataset/image_mcq.py at e8e78f0: ImageMCQDataset,
    `evaluate_heuristic` -> utils/multiple_choice.py `mcq_vanilla_eval`, `extract_answer_from_item`,
    `report_acc`): the reply read by `can_infer` (utils/matching_util.py), Z where it reads nothing (the
    `exact_matching` policy; `--judge-backend` asks a model there, as `build_prompt_blink` does); hit = the
    letter equals `answer`; Overall = the mean over items, and accuracy per `category` (the subtask)."""
    return vlmeval_mcq.score(records, render, "BLINK")


def _judge_verdict(output: str, record: SampleResult) -> str:
    return blink_judge.verdict(output, len(record.choices or [])) or blink_judge.NONE


OFFICIAL_JUDGE = Judge(  # eval/multiple_choice.py `match_multiple_choice`, for the replies blink_match reads none in
    lambda text, r: bool(r.choices) and blink_match.match(text, r.choices).rule == "no option",
    lambda text, r: blink_judge.judge_prompt(vlmeval_mcq.question(r), r.choices or [], text), _judge_verdict)

_ANSWER = "the option letter in parentheses, e.g. (A)"

BENCHMARK = Benchmark(
    NAME, load_blink, "BLINK: multiple choice over 1-4 images, per-subtask accuracy (parquet file or snapshot folder)",
    detect=detect, answer_form="choice", extractor=extract, render=render, evaluation_split="val",  # test: hidden
    agent_task=2,
    scorers={OFFICIAL: official, "lmms-eval": lmms_eval, "vlmevalkit": vlmevalkit},
    judges={OFFICIAL: OFFICIAL_JUDGE, "vlmevalkit": vlmeval_mcq.judge(blink=True)},
    decided_by={OFFICIAL: lambda text, r: blink_match.match(text, r.choices).rule,
                "vlmevalkit": vlmeval_mcq.decided_by},
    sevex_tasks=(
        SevexTask("Jigsaw", "An image has a missing piece; choose which of two candidate pieces completes it.",
                  _ANSWER, ("Jigsaw",)),
        SevexTask("Relative_Depth", "Two points A and B are marked; which one is closer to the camera?", _ANSWER,
                  ("Relative_Depth",)),
        SevexTask("Spatial_Relation", "Answer a question about the 3-D spatial relation between objects.", _ANSWER,
                  ("Spatial_Relation",)),
        SevexTask("Semantic_Correspondence", "A point is marked on one image; choose the semantically "
                  "corresponding point among the marked options in a second image of another instance.", _ANSWER,
                  ("Semantic_Correspondence",)),
        SevexTask("Visual_Correspondence", "A point is marked on one image; choose the point showing the same "
                  "physical spot in a second photo of the same scene.", _ANSWER, ("Visual_Correspondence",)),
    ),
    inspect_task=NAME)
