"""V* bench questions (penghao-wu/vstar; shipped again in ziplab/DDP asset/): JSONL lines
`image, text, category, question_id, label`, the options written in `text` as "(A) ..." lines.

`image` ("direct_attributes/sa_4690.jpg") is relative to the benchmark folder, which need not hold the JSONL:
pass --images-root.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..records import SampleResult
from . import vlmeval_mcq
from .base import DatasetError, ListDataset, Sample
from .benchmark import Benchmark, Columns
from .files import read_json_lines, require_columns
from .forms import extract
from .harness import OFFICIAL, Score, choice_score, macro, micro, plain
from .options import inline_options
from .splits import check_no_split

NAME = "vstar"

COLUMNS = ["image", "text", "category", "question_id", "label"]


def load_vstar(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    check_no_split(split, "V* bench", path)
    root = (images_root or path.parent).resolve()
    samples = []
    for where, row in read_json_lines(path):
        require_columns(row if isinstance(row, dict) else [], COLUMNS, where)
        where = f"{where} (question_id {row['question_id']!r})"
        image = root / row["image"]
        if not image.is_file():
            raise DatasetError(f"{where}, image: file not found: {image}; pass --images-root (the V* bench folder "
                               "holding direct_attributes/ and relative_position/)")
        stem, choices = inline_options(row["text"], where)
        if not choices:
            raise DatasetError(f"{where}: 'text' holds no '(A) ...' option lines")
        label = str(row["label"]).strip().strip("()").upper()
        if label not in set("ABCDEFGH"[:len(choices)]):  # one of the letters, never a run of them
            raise DatasetError(f"{where}: label {row['label']!r} is not one of the {len(choices)} option letters")
        samples.append(Sample(id=str(row["question_id"]), images=[image.resolve()], question=stem, answer=label,
                              choices=choices, category=row["category"],
                              metadata={"prompt": row["text"], "image": row["image"]}))
    return ListDataset(NAME, samples)


def detect(path: Path, columns: Columns) -> bool:
    return path.suffix == ".jsonl" and {"image", "text", "label", "question_id"} <= columns.names


def official(records: list[SampleResult]) -> Score:
    """V* bench (penghao-wu/vstar vstar_bench_eval.py at 4ede664): accuracy per question type and `np.mean` over
    all items as the headline. The official script ranks options by likelihood; a text reply is read by
    trompe's option extractor (forms.py `choice`)."""
    groups = choice_score(records, plain,
                           lambda text, r: extract("choice", text, choices=r.choices) == r.label)
    return Score(OFFICIAL, "V* vstar_bench_eval.py: accuracy over all items", {
        "accuracy": micro(groups), "mean over categories": macro(groups)}, groups)


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


def lmms_eval(records: list[SampleResult]) -> Score:
    """lmms-eval `vstar_bench` (lmms_eval/tasks/vstar_bench/utils.py at 75571cf): `extract_answer_letter` equals
    the label; `vstar_overall_acc` over all items, `vstar_<category>_acc` per category."""
    groups = choice_score(records, plain, lambda text, r: lmms_vstar_letter(text) == r.label)
    return Score("lmms-eval", "lmms-eval vstar_bench: overall accuracy", {"vstar_overall_acc": micro(groups)},
                 groups)


def vlmevalkit(records: list[SampleResult]) -> Score:
    """VLMEvalKit `VStarBench` (vlmeval/dataset/image_mcq.py at e8e78f0, the same ImageMCQDataset path as BLINK
    with the generic `build_prompt` judge request): `can_infer`, else Z; Overall over items, per category."""
    return vlmeval_mcq.score(records, plain, "VStarBench")


BENCHMARK = Benchmark(
    NAME, load_vstar, "V* Bench: multiple choice about small details of large images (test_questions.jsonl)",
    detect=detect, answer_form="choice", agent_task=2,
    scorers={OFFICIAL: official, "lmms-eval": lmms_eval, "vlmevalkit": vlmevalkit},
    judges={"vlmevalkit": vlmeval_mcq.judge()}, decided_by={"vlmevalkit": vlmeval_mcq.decided_by},
    inspect_task=NAME)
