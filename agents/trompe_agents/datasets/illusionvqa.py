"""IllusionVQA (HF csebuetnlp/illusionVQA-*): multiple choice; the answer text becomes its option letter."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

from .base import DatasetError, ListDataset, Sample
from .files import require_file
from .parquet import images_folder, read_rows, write_image


def choices_of(row: dict[str, Any], where: str) -> list[str]:
    for key in ("options", "choices"):
        if key in row:
            value = row[key]
            return list(json.loads(value) if isinstance(value, str) else value)
    raise DatasetError(f"{where}: missing column 'options' (or 'choices')")


def answer_letter(answer: str, choices: list[str], where: str) -> str:
    """The option letter for an answer given as option text (or already as a letter)."""
    wanted = str(answer).strip().lower()
    for letter, text in zip(string.ascii_uppercase, choices, strict=False):
        if str(text).strip().lower() == wanted:
            return letter
    if len(wanted) == 1 and wanted.upper() in string.ascii_uppercase[:len(choices)]:
        return wanted.upper()
    raise DatasetError(f"{where}: answer {answer!r} is not one of the options {choices}")


def _sample(row: dict[str, Any], image: Path, sample_id: str, where: str) -> Sample:
    choices = choices_of(row, where)
    answer = row.get("answer")
    return Sample(id=sample_id, images=[image], question=row["question"],
                  answer=answer_letter(answer, choices, where) if answer not in (None, "") else None,
                  choices=[str(c) for c in choices], category=row.get("category"),
                  metadata={"answer_text": answer})


def load_illusionvqa(path: Path, images_root: Path | None = None) -> ListDataset:
    """Parquet (images embedded) or a JSON/JSONL list whose `image` names a file under images_root."""
    samples = []
    if path.suffix in (".json", ".jsonl"):
        root = (images_root or path.parent).resolve()
        text = path.read_text(encoding="utf-8")
        lines = [line for line in text.splitlines() if line.strip()]
        rows = json.loads(text) if path.suffix == ".json" else [json.loads(line) for line in lines]
        for i, row in enumerate(rows):
            sample_id = str(row.get("id", i))
            where = f"{path}: item {i} (id {sample_id!r})"
            for key in ("image", "question"):
                if key not in row:
                    raise DatasetError(f"{where}: missing column {key!r}")
            image = require_file(root / row["image"], f"{where}, image")
            samples.append(_sample(row, image, sample_id, where))
        return ListDataset("illusionvqa", samples)
    folder = images_folder(images_root, "illusionvqa", path)
    for i, (where, row) in enumerate(read_rows(path, ["image", "question"])):
        sample_id = str(row.get("id", i))
        where = f"{where} (id {sample_id!r})"
        image = write_image(row["image"], folder, f"illusionvqa_{sample_id}", f"{where}, image")
        samples.append(_sample(row, image, sample_id, where))
    return ListDataset("illusionvqa", samples)
