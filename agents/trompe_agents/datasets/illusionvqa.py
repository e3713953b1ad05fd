"""IllusionVQA (HF csebuetnlp/illusionVQA-*): multiple choice with up to 8 options; the answer text -> its letter.

Parquet snapshots hold splits train (4 few-shot rows), test (435) and select (11); the test split is read
unless --split says otherwise. The GitHub result JSONs name each image twice: `image` ("326.jpg") and
`image_path` ("illusionVQA/comprehension/EVAL/326.jpg"); either is looked up under --images-root.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .answers import LETTERS
from .base import DatasetError, ListDataset, Sample
from .files import read_json_lines, read_json_list
from .parquet import images_folder, read_rows, write_image
from .splits import check_no_split


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
        return ListDataset("illusionvqa", samples)
    folder = images_folder(images_root, "illusionvqa", path)
    rows, chosen = read_rows(path, ["image", "question"], split, "illusionvqa")
    for i, (where, row) in enumerate(rows):
        sample_id = str(row.get("id", i))
        where = f"{where} (id {sample_id!r})"
        image = write_image(row["image"], folder, f"{where}, image")
        samples.append(_sample(row, image, sample_id, where, chosen))
    return ListDataset("illusionvqa", samples)
