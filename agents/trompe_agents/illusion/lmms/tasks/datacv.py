"""The lmms-eval task functions for the DataCV 2026 illusion challenge in its own files, as ziplab/DDP ships them
(asset/Data/task1/test.csv: `index,image_path,prompt`; asset/Data/task2/test.json: a list of `image_name,
Question, option`), with the gold answer in an `answer` (or `label`) column or key: Task I 1/0, Task II A-D.

The prompt is the item's own: Task I's `prompt` already asks for `<reasons>...</reasons><answer>1|0</answer>`;
Task II's question and its "A. ..." option lines, then the answer form. A reply is read by trompe's extractor
(datasets/answers.py: `<answer>` first, as `illusion-agent run` reads DataCV), an empty reply is wrong, and the
number is the challenge's: accuracy over every item (Codabench reports overall classification accuracy).

Images are read where the organisers' code reads them: Task I `image_path` against the folder named by
TROMPE_DATACV_TASK1 (the one holding test.csv), Task II `image_name` under TROMPE_DATACV_TASK2 (the image folder).
An item without a label stops the task before any request is sent: lmms-eval scores labelled items, and the
unlabelled test split goes through `illusion-agent run` and `submit` instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PIL import Image

from ....datasets.answers import states_answer
from ....datasets.options import dot_options

TASK1_ROOT, TASK2_ROOT = "TROMPE_DATACV_TASK1", "TROMPE_DATACV_TASK2"
LABELS = ("answer", "label")


def _label(doc: dict[str, Any]) -> str | None:
    found = next((doc[key] for key in LABELS if doc.get(key) not in (None, "")), None)
    return None if found is None else str(found).strip()


def _labelled(dataset, what: str):
    """The dataset itself, once every item has a label; else a ValueError naming the first item without one."""
    for position, doc in enumerate(dataset):
        if _label(doc) is None:
            raise ValueError(f"{what}: item {position} has no label ('answer' or 'label'); lmms-eval scores "
                             "labelled items: use the labelled split, or run the test split with `illusion-agent "
                             "run` and `illusion-agent submit --format datacv`")
    return dataset


def _image(variable: str, name: str) -> list[Image.Image]:
    """The one image of an item, read whole, from the folder the environment variable names."""
    root = os.environ.get(variable)
    if not root:
        raise ValueError(f"{variable} is not set: set it to the folder the DataCV images are read against")
    with Image.open(Path(root) / name) as image:
        image.load()
        return [image.copy()]


def task1_docs(dataset):
    return _labelled(dataset, "DataCV Task I")


def task2_docs(dataset):
    return _labelled(dataset, "DataCV Task II")


def task1_visual(doc: dict[str, Any]) -> list[Image.Image]:
    return _image(TASK1_ROOT, doc["image_path"])


def task2_visual(doc: dict[str, Any]) -> list[Image.Image]:
    return _image(TASK2_ROOT, doc["image_name"])


def task1_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The item's prompt as given (its answer instructions included)."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['prompt']}{kwargs.get('post_prompt', '')}"


def task2_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The question, its option lines as given, and the answer form."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['Question'].strip()}\n{doc['option'].strip()}" \
           f"{kwargs.get('post_prompt', '')}"


def task1_target(doc: dict[str, Any]) -> str:
    return _label(doc) or ""


def task2_target(doc: dict[str, Any]) -> str:
    return _label(doc) or ""


def task1_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Right when the reply's answer (1/0, or yes/no) is the label; an empty reply is wrong."""
    reply = results[0]
    return {"accuracy": float(bool(reply.strip()) and states_answer("datacv1", reply, task1_target(doc)))}


def task2_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Right when the reply's option letter is the label; an empty reply is wrong."""
    reply, choices = results[0], dot_options(doc["option"], f"DataCV Task II {doc['image_name']}")
    return {"accuracy": float(bool(reply.strip()) and states_answer("datacv2", reply, task2_target(doc), choices))}
