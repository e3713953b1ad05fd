"""HallusionBench: the official JSON (tianyi-lab/HallusionBench) or lmms-lab's parquet; answers "1"/"0" -> yes/no.

Every question is kept, text-only ones (visual_input 0, no image) included, because the official scoring
(utils.py: get_eval_all, get_eval_pair_all, get_eval_fig) counts them. The JSON's `filename` ("./VD/illusion/
0_0.png") is relative to the image folder, not the JSON; the official code builds the same path as
root/category/subcategory/<set_id>_<figure_id>.png. --split image|non_image (lmms-lab's split names) keeps
only the questions with or without a figure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..records import SampleResult
from .base import DatasetError, ListDataset, Sample
from .benchmark import Benchmark, Columns, Judge
from .files import read_json_list, require_columns
from .forms import extract
from .harness import OFFICIAL, Score, per_group, plain, reply
from .parquet import images_folder, read_rows, write_image
from .splits import ALL
from .vlmeval_match import vlmeval_yes_no
from .vlmeval_mcq import question

NAME = "hallusionbench"

COLUMNS = ["category", "subcategory", "visual_input", "set_id", "figure_id", "question_id", "question",
           "gt_answer", "filename"]
KEYS = ("category", "subcategory", "visual_input", "set_id", "figure_id", "question_id")
METADATA = (*KEYS, "gt_answer_details", "filename", "sample_note")
SPLITS = ("image", "non_image", ALL)
IMAGE_FOLDER = "hallusion_bench"  # what the repository's hallusion_bench.zip unpacks to


def sample_id(item: dict[str, Any]) -> str:
    return "_".join(str(item[k]) for k in ("category", "subcategory", "set_id", "figure_id", "question_id"))


def has_figure(item: dict[str, Any]) -> bool:
    return str(item["visual_input"]) != "0"


def _answer(item: dict[str, Any], where: str) -> str:
    gt = str(item["gt_answer"]).strip()
    if gt not in ("0", "1"):
        raise DatasetError(f"{where}: gt_answer must be '0' or '1', got {item['gt_answer']!r}")
    return "yes" if gt == "1" else "no"


def _sample(item: dict[str, Any], images: list[Path], where: str) -> Sample:
    return Sample(id=sample_id(item), images=images, question=item["question"], answer=_answer(item, where),
                  category=item["subcategory"], metadata={k: item.get(k) for k in METADATA}, answer_type="yesno")


def image_roots(path: Path, images_root: Path | None) -> list[Path]:
    """Where figures may live: the given folder, else hallusion_bench/ beside the JSON, else the JSON's folder."""
    if images_root is not None:
        return [images_root.resolve()]
    return [(path.parent / IMAGE_FOLDER).resolve(), path.parent.resolve()]


def figure_path(item: dict[str, Any], roots: list[Path], where: str) -> Path:
    """root/filename, or root/category/subcategory/<set_id>_<figure_id>.png as the official utils.py builds it."""
    official = f"{item['category']}/{item['subcategory']}/{item['set_id']}_{item['figure_id']}.png"
    names = [n for n in (item.get("filename"), official) if n]
    for root in roots:
        for name in names:
            if (root / name).is_file():
                return (root / name).resolve()
    raise DatasetError(f"{where}: figure not found: {names[0]} under {', '.join(map(str, roots))}; pass "
                       "--images-root FOLDER (the folder holding VD/ and VS/)")


def _keep(item: dict[str, Any], split: str | None) -> bool:
    return split in (None, ALL) or (split == "image") == has_figure(item)


def _check_split(split: str | None, path: Path) -> None:
    if split not in (None, *SPLITS):
        raise DatasetError(f"--split: {path}: HallusionBench splits are {', '.join(SPLITS)}, got {split!r}")


def load_hallusionbench(path: Path, images_root: Path | None = None, split: str | None = None) -> ListDataset:
    _check_split(split, path)
    if path.suffix == ".json":
        return _load_json(path, images_root, split)
    return _load_parquet(path, images_root, split)


def _load_json(path: Path, images_root: Path | None, split: str | None) -> ListDataset:
    roots = image_roots(path, images_root)
    samples = []
    for i, item in enumerate(read_json_list(path, "questions")):
        where = f"{path}: item {i}"
        require_columns(item if isinstance(item, dict) else [], COLUMNS, where)
        where = f"{where} (id {sample_id(item)!r})"
        if _keep(item, split):
            images = [figure_path(item, roots, f"{where}, filename")] if has_figure(item) else []
            samples.append(_sample(item, images, where))
    return ListDataset(NAME, samples)


def _load_parquet(path: Path, images_root: Path | None, split: str | None) -> ListDataset:
    """lmms-lab/HallusionBench: the same columns plus an `image` struct, in splits image and non_image."""
    folder = images_folder(images_root, NAME, path)
    rows, _ = read_rows(path, [*COLUMNS, "image"], ALL, ALL)  # rows are kept by visual_input
    samples = []
    for where, item in rows:
        where = f"{where} (id {sample_id(item)!r})"
        if not _keep(item, split):
            continue
        images = [write_image(item["image"], folder, f"{where}, image")] if has_figure(item) else []
        samples.append(_sample(item, images, where))
    return ListDataset(NAME, samples)


def detect(path: Path, columns: Columns) -> bool:
    if path.suffix == ".json":
        return {"gt_answer", "visual_input"} <= columns.names
    return (path.suffix == ".parquet" or path.is_dir()) and {"gt_answer", "visual_input", "image"} <= columns.names



def _hb_join(record: SampleResult, *names: str) -> str:
    return "_".join(str(record.keys.get(n)) for n in names)


def _no_figure(record: SampleResult) -> bool:
    return record.keys.get("category") == "VS" and str(record.keys.get("figure_id")) == "0"


def _has_figure(record: SampleResult) -> bool:
    return str(record.keys.get("visual_input", "1")) != "0"


def _all_right(records: list[SampleResult], key: Callable[[SampleResult], str], right: dict[str, bool]) -> float:
    groups: dict[str, bool] = {}
    for record in records:
        name = key(record)
        groups[name] = groups.get(name, True) and right[record.id]
    return sum(groups.values()) / len(groups) if groups else 0.0


def _hallusion(records: list[SampleResult], scorer: str, rule: str) -> Score:
    """aAcc, qAcc and fAcc with the official groups (utils.py get_eval_all, get_eval_pair_all, get_eval_fig)."""
    right = {}
    for record in records:
        text = reply(record, plain)
        said = extract("yesno", text) if text is not None else None
        # assign_correctness: an unclear answer to a VS question shown no figure counts as right
        right[record.id] = _no_figure(record) if said is None else said == record.label
    by_sub: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        by_sub[_hb_join(record, "category", "subcategory")].append(right[record.id])
    pair = lambda r: _hb_join(r, "category", "subcategory", "set_id", "question_id")  # noqa: E731
    figure = lambda r: _hb_join(r, "category", "subcategory", "set_id", "figure_id")  # noqa: E731
    return Score(scorer, rule, {
        "aAcc": sum(right.values()) / len(right) if right else 0.0,
        "qAcc": _all_right(records, pair, right),
        "fAcc": _all_right([r for r in records if not _no_figure(r)], figure, right)}, per_group(by_sub),
        frozenset(r.id for r in records))


def official(records: list[SampleResult]) -> Score:
    """HallusionBench's own scoring (tianyi-lab/HallusionBench utils.py, as lmms-eval vendors it in
    lmms_eval/tasks/hallusion_bench/utils.py at 75571cf): a question is right (1), wrong (0) or unclear (2);
    `assign_correctness` counts an unclear VS question without a figure as right; aAcc = right / questions,
    qAcc = question groups category_subcategory_set_id_question_id all right, fAcc = figure groups
    category_subcategory_set_id_figure_id all right, VS figure 0 left out. The GPT-4 correctness judge is
    replaced by trompe's yes/no reading of the reply (forms.py `yesno`; none found: unclear); with
    `--judge-backend` a model judges each reply against `gt_answer_details` instead (judges.py)."""
    return _hallusion(records, OFFICIAL, "tianyi-lab/HallusionBench utils.py (aAcc, qAcc, fAcc)")


def lmms_eval(records: list[SampleResult]) -> Score:
    """lmms-eval `hallusion_bench_image` (lmms_eval/tasks/hallusion_bench/hallusion_bench_image.yaml and
    evaluate_hb.py at 75571cf): the official rules (`hb_aggregation_result` -> assign_correctness, get_eval_all,
    get_eval_pair_all, get_eval_fig) on the `image` split only, i.e. the questions shown a figure (the yes-substring
    `*_intern` aggregations are commented out in the yaml)."""
    return _hallusion([r for r in records if _has_figure(r)], "lmms-eval",
                      "lmms-eval hallusion_bench_image: official rules on the image split")


def vlmevalkit(records: list[SampleResult]) -> Score:
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
        text = reply(record, plain)
        said = vlmeval_yes_no(text) if text is not None else "Unknown"
        right[record.id] = said == str(record.label).capitalize()
    figure = lambda r: _hb_join(r, "subcategory", "set_id", "figure_id")  # noqa: E731
    question = lambda r: _hb_join(r, "subcategory", "set_id", "question_id")  # noqa: E731
    by_sub: dict[str, list[bool]] = defaultdict(list)
    for record in records:
        by_sub[str(record.keys.get("subcategory"))].append(right[record.id])
    return Score("vlmevalkit", "VLMEvalKit Hallusion_rating (exact matching): aAcc, fAcc, qAcc", {
        "aAcc": sum(right.values()) / len(right) if right else 0.0,
        "fAcc": _all_right(records, figure, right), "qAcc": _all_right(records, question, right)},
        per_group(by_sub), frozenset(r.id for r in records))


def vlmeval_yorn_prompt(text: str, record: SampleResult) -> str:
    """VLMEvalKit's `YOrN_match_prompt`: Yes, No or Unknown for an answer to a yes/no question."""
    return ("Match an answer to a yes/no question with Yes or No, whichever it means; output Unknown if it means "
            "neither. Output one word: Yes, No or Unknown.\n\n"
            f"Question: {question(record)}\nAnswer: {text}\nYour output:")


def _yorn_unread(text: str, record: SampleResult) -> bool:
    """A reply VLMEvalKit scores (one shown a figure) that `YOrN_Extraction` reads as Unknown."""
    return _has_figure(record) and vlmeval_yes_no(text) == "Unknown"


def hallusion_prompt(text: str, record: SampleResult) -> str:
    """`evaluate_by_chatgpt`'s request: does the prediction agree with, conflict with, or leave unclear the
    reference answer (the item's `gt_answer_details`, else its yes/no label)?"""
    reference = record.keys.get("gt_answer_details") or str(record.label or "")
    return ("Read the question, the reference answer and the predicted answer, and judge the prediction. Output "
            "correct if it does not conflict with the reference answer, incorrect if it conflicts with it, and "
            "unclear if the prediction leaves the answer unclear. Output one word.\n\n"
            f"Question: {question(record)}\nReference answer: {reference}\nPredicted answer: {text}\nOutput:")


def hallusion_verdict(output: str, record: SampleResult) -> str:
    """The reply the scorer then reads: "incorrect" anywhere -> the other answer, else "correct" -> the label,
    else none (unclear), tested in that order as `evaluate_by_chatgpt` does."""
    said, label = output.lower(), str(record.label or "").lower()
    if "incorrect" in said:
        return {"yes": "no", "no": "yes"}.get(label, "")
    return label if "correct" in said else ""


BENCHMARK = Benchmark(
    NAME, load_hallusionbench,
    "HallusionBench: yes/no, aAcc/qAcc/fAcc by the official and lmms-eval rules (JSON or parquet)",
    detect=detect, answer_form="yesno", evaluation_split=ALL,  # the official scoring covers both of lmms-lab's splits
    agent_task=1, scorers={OFFICIAL: official, "lmms-eval": lmms_eval, "vlmevalkit": vlmevalkit},
    judges={OFFICIAL: Judge(lambda text, r: True, hallusion_prompt, hallusion_verdict),
            "lmms-eval": Judge(lambda text, r: _has_figure(r), hallusion_prompt, hallusion_verdict),
            "vlmevalkit": Judge(_yorn_unread, vlmeval_yorn_prompt, lambda output, r: vlmeval_yes_no(output))},
    record_keys=(*KEYS, "gt_answer_details"), inspect_task=NAME)
