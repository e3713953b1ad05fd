"""The lmms-eval task functions for trompe's probe sets (probes.jsonl: `id, images, question, answer, choices,
category, metadata`, as `trompe probes generate` and `trompe dataset convert` write it).

The prompt is the question with its lettered options and the answer form asked (yes or no; an option letter);
a reply is read by trompe's own extractor (datasets/answers.py, as `illusion-agent run` reads a probe set) and the
numbers are a probe set's official ones (datasets/metrics.py): accuracy, and accuracy per category with the mean
over categories. Image paths are read against TROMPE_PROBES_DIR (the probe set's folder), else the sample set's.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from PIL import Image

from ....datasets.answers import states_answer
from ....final_answer import LETTERS

SAMPLE = Path(__file__).parent / "sample"
ROOT = "TROMPE_PROBES_DIR"


def images_root() -> Path:
    return Path(os.environ.get(ROOT) or SAMPLE)


def doc_to_visual(doc: dict[str, Any]) -> list[Image.Image]:
    """The doc's images, read whole (no file is left open)."""
    images = []
    for name in doc["images"]:
        with Image.open(images_root() / name) as image:
            image.load()
            images.append(image.copy())
    return images


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The question, its options lettered A, B, ..., and the form of answer the item takes."""
    kwargs = lmms_eval_specific_kwargs or {}
    text, choices = doc["question"], doc.get("choices") or []
    if choices:
        text += "\n" + "\n".join(f"{letter}. {choice}" for letter, choice in zip(LETTERS, choices))
    post = kwargs.get("choice_prompt", "") if choices else kwargs.get("yesno_prompt", "")
    return f"{kwargs.get('pre_prompt', '')}{text}{post}"


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """Right when trompe's extractor reads the gold answer in the reply (an empty reply is wrong)."""
    right = bool(results[0].strip()) and states_answer("probes", results[0], str(doc["answer"]), doc.get("choices"))
    by_category = {"category": doc.get("category") or "-", "is_correct": right}
    return {"accuracy": float(right), "accuracy_by_category": by_category}


def mean_over_categories(results: list[dict[str, Any]]) -> dict[str, float]:
    """Accuracy per category and their unweighted mean (`mean over categories`)."""
    rights: dict[str, list[bool]] = defaultdict(list)
    for result in results:
        rights[result["category"]].append(result["is_correct"])
    table = {name: sum(v) / len(v) for name, v in sorted(rights.items())}
    return {**table, "mean over categories": sum(table.values()) / len(table) if table else 0.0}
