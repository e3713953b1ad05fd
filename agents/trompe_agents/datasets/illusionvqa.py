"""IllusionVQA (HF csebuetnlp/illusionVQA-*): multiple choice with up to 8 options; the answer text -> its letter.

Parquet snapshots hold splits train (4 few-shot rows), test (435) and select (11); the test split is read
unless --split says otherwise. The GitHub result JSONs name each image twice: `image` ("326.jpg") and
`image_path` ("illusionVQA/comprehension/EVAL/326.jpg"); either is looked up under --images-root.
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

from ..records import SampleResult
from .base import DatasetError, ListDataset, Sample
from .benchmark import Benchmark, Columns
from .files import read_json_lines, read_json_list
from .forms import LETTERS
from .harness import OFFICIAL, Score, choice_score, macro, micro, plain, subtask
from .parquet import images_folder, read_rows, write_image
from .splits import check_no_split

NAME = "illusionvqa"


def choices_of(row: dict[str, Any], where: str) -> list[str]:
    for key in ("options", "choices"):
        if key in row:
            value = row[key]
            choices = list(json.loads(value) if isinstance(value, str) else value)
            if len(choices) > len(LETTERS):
                raise DatasetError(f"{where}: {len(choices)} options; at most {len(LETTERS)} (A-H) are supported")
            return choices
    raise DatasetError(f"{where}: missing column 'options' (or 'choices')")


def answer_letter(answer: str, choices: list[str], where: str) -> str:
    """The option letter for an answer given as option text (or already as a letter)."""
    wanted = str(answer).strip().lower()
    for letter, text in zip(LETTERS, choices, strict=False):
        if str(text).strip().lower() == wanted:
            return letter
    if len(wanted) == 1 and wanted.upper() in LETTERS[:len(choices)]:
        return wanted.upper()
    raise DatasetError(f"{where}: answer {answer!r} is not one of the options {choices}")


def _sample(row: dict[str, Any], image: Path, sample_id: str, where: str, split: str | None) -> Sample:
    choices = choices_of(row, where)
    answer = row.get("answer")
    return Sample(id=sample_id, images=[image], question=row["question"],
                  answer=answer_letter(answer, choices, where) if answer not in (None, "") else None,
                  choices=[str(c) for c in choices], category=row.get("category"),
                  metadata={"answer_text": answer, "split": split})


def _json_image(row: dict[str, Any], root: Path, where: str) -> Path:
    names = [row[k] for k in ("image_path", "image") if row.get(k)]
    for name in names:
        if (root / name).is_file():
            return (root / name).resolve()
    raise DatasetError(f"{where}: image not found: {' or '.join(names) or '(no image field)'} under {root}; "
                       "pass --images-root FOLDER")


def _read_json_rows(path: Path) -> list[Any]:
    if path.suffix == ".jsonl":
        return [row for _, row in read_json_lines(path)]
    return read_json_list(path, "items")


def load_illusionvqa(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    """Parquet (images embedded) or a JSON/JSONL list whose `image`/`image_path` names a file."""
    samples = []
    if path.suffix in (".json", ".jsonl"):
        check_no_split(split, "IllusionVQA JSON", path)
        root = (images_root or path.parent).resolve()
        for i, row in enumerate(_read_json_rows(path)):
            sample_id = str(row.get("id", i)) if isinstance(row, dict) else str(i)
            where = f"{path}: item {i} (id {sample_id!r})"
            for key in ("image", "question"):
                if not isinstance(row, dict) or key not in row:
                    raise DatasetError(f"{where}: missing column {key!r}")
            samples.append(_sample(row, _json_image(row, root, where), sample_id, where, None))
        return ListDataset(NAME, samples)
    folder = images_folder(images_root, NAME, path)
    rows, chosen = read_rows(path, ["image", "question"], split, BENCHMARK.evaluation_split)
    for i, (where, row) in enumerate(rows):
        sample_id = str(row.get("id", i))
        where = f"{where} (id {sample_id!r})"
        image = write_image(row["image"], folder, f"{where}, image")
        samples.append(_sample(row, image, sample_id, where, chosen))
    return ListDataset(NAME, samples)


def detect(path: Path, columns: Columns) -> bool:
    """Loose rules (V*'s JSONL has an `image` too): tried after the stricter ones."""
    names = columns.names
    if path.suffix == ".jsonl":
        return "images" not in names and "image" in names
    options = bool({"options", "choices"} & names)
    if path.suffix == ".json":
        return "question" in names and options
    return (path.suffix == ".parquet" or path.is_dir()) and {"image", "question"} <= names and options


ILLUSIONVQA_MISC = ("counting", "repeating pattern", "perspective", "occlusion", "angle constancy")


def official(records: list[SampleResult]) -> Score:
    """IllusionVQA's own evaluation (csebuetnlp/IllusionVQA evaluation_code/generic_eval.ipynb at 9e1c2b8): the
    reply's first character equals the option letter (case kept); headline the total over all items; the table
    per category with counting, repeating pattern, perspective, occlusion and angle constancy merged as Misc."""
    def group(record: SampleResult) -> str:
        category = subtask(record)
        return "Misc" if category in ILLUSIONVQA_MISC else category

    groups = choice_score(records, plain, lambda text, r: text[:1] == r.label, group)
    return Score(OFFICIAL, "IllusionVQA generic_eval.ipynb: accuracy over all items", {
        "accuracy": micro(groups), "mean over categories": macro(groups)}, groups)


def lmms_eval(records: list[SampleResult]) -> Score:
    """lmms-eval `illusionvqa_comprehension` (lmms_eval/tasks/illusionvqa/utils.py `MultiChoiceRegexFilter`,
    illusionvqa.yaml at 75571cf): a reply starting "X." reads as X, any other reply as itself; exact_match with
    ignore_case and ignore_punctuation against the letter (lmms_eval/api/metrics.py `exact_match_hf_evaluate`:
    spaces are kept); the mean over items."""
    def right(text: str, record: SampleResult) -> bool:
        found = re.match(r"^\s*([A-Z])\.", text)
        said = found.group(1) if found else text
        return _no_punctuation(said).lower() == _no_punctuation(str(record.label)).lower()  # no strip there

    groups = choice_score(records, plain, right)
    return Score("lmms-eval", "lmms-eval illusionvqa: exact_match over items", {"exact_match": micro(groups)},
                 groups)


def _no_punctuation(text: str) -> str:
    return text.translate(str.maketrans("", "", string.punctuation))


BENCHMARK = Benchmark(
    NAME, load_illusionvqa, "IllusionVQA: multiple choice with up to 8 options (parquet, JSONL or JSON)",
    detect=detect, detection_rank=2, answer_form="choice", agent_task=2,
    evaluation_split="test",  # train and select hold few-shot examples
    scorers={OFFICIAL: official, "lmms-eval": lmms_eval}, inspect_task=NAME)
