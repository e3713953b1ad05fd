"""trompe's datasets as Inspect samples: read by trompe's own loaders, with the trompe sample kept in metadata."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import ChatMessageUser, Content, ContentImage, ContentText

from trompe_agents.datasets.answer_types import AnswerType, of_sample, parse
from trompe_agents.datasets.base import Sample
from trompe_agents.datasets.load import load_dataset, resolve_task
from trompe_agents.datasets.metrics import metric_keys
from trompe_agents.failures import ErrorKind
from trompe_agents.illusion.agent import compose_question
from trompe_agents.records import SampleResult
from trompe_agents.toolclient import image_data_url

KEY = "trompe"  # the metadata key of the trompe sample (and of the run in the task's metadata)
RECORD = "trompe_record"  # the store key of the sample's result record (the line `illusion-agent run` writes)
CONFIG = "trompe_config"  # ... and of the agent's settings (run.json's `agent`)


def _plain(value: Any) -> Any:
    """JSON values only (a log holds JSON): paths and other objects become strings."""
    return json.loads(json.dumps(value, default=str))


def sample_metadata(sample: Sample, position: int, fmt: str, task: int) -> dict[str, Any]:
    """What a solver and a scorer need to rebuild the trompe sample and score it as trompe does."""
    return _plain({"id": sample.id, "images": [str(p) for p in sample.images], "question": sample.question,
                   "answer": sample.answer, "choices": sample.choices, "category": sample.category,
                   "metadata": sample.metadata, "error": sample.error, "position": position, "format": fmt,
                   "task": task, "answer_type": kind.describe() if (kind := of_sample(sample)) else None})


def trompe_sample(metadata: dict[str, Any]) -> Sample:
    """The trompe sample an Inspect sample was made from."""
    m = metadata[KEY]
    return Sample(m["id"], [Path(p) for p in m["images"]], m["question"], m["answer"], m["choices"],
                  m["category"], m["metadata"] or {}, m["error"], m.get("answer_type"))


def answer_type(metadata: dict[str, Any]) -> AnswerType | None:
    """The sample's answer type (the final-answer schema follows it), as `sample_metadata` recorded it."""
    kind = metadata.get("answer_type")
    return parse(kind) if kind else None


def result_record(meta: dict[str, Any], model: str, answer: str | None, reasons: str, correct: bool | None,
                  agent: str, error: str | None = None, kind: str | None = None,
                  reply: str | None = None) -> SampleResult:
    """The result record `illusion-agent run` would write, for an answer another solver gave (`agent`), or for
    none: failed with `kind` (no_answer when it names none), the solver's text kept as its `reply`."""
    sample_meta = meta["metadata"] or {}
    facts = SampleResult.of_sample(
        str(meta["id"]), index=sample_meta.get("index", meta["id"]), position=meta["position"],
        question=meta["question"], choices=meta["choices"], images=meta["images"], label=meta["answer"],
        category=meta["category"], family=sample_meta.get("family"), magnitude=sample_meta.get("magnitude"),
        magnitude_unit=sample_meta.get("magnitude_unit"), counterfactual=sample_meta.get("counterfactual"),
        keys=metric_keys(sample_meta), model=model, answer_type=meta.get("answer_type"))
    if answer is None:
        return facts.with_failure(ErrorKind(kind or ErrorKind.NO_ANSWER), error, reply=reply)
    return facts.with_answer(answer, agent, correct, reasons=reasons, error=error)


def prompt_content(sample: Sample, inline: bool = False) -> list[Content]:
    """The question with its options, then its images: the input any Inspect solver sees. Image files are named
    by path (Inspect reads a sample's input files itself) or, `inline`, sent as data URLs (a solver's own turn)."""
    content: list[Content] = [ContentText(text=compose_question(sample.question, sample.choices, "").strip())]
    if not sample.error:
        content += [ContentImage(image=image_data_url(path) if inline else str(path)) for path in sample.images]
    return content


def inspect_dataset(path: str, fmt: str, images_root: str | None = None, split: str | None = None,
                    labels: str | None = None, task: int | None = None) -> tuple[MemoryDataset, dict[str, Any]]:
    """The Inspect dataset of a local benchmark file, and the run's description for the task's metadata."""
    loaded = load_dataset(path, format=fmt, labels=labels, images_root=images_root, split=split)
    samples = list(loaded)
    task = resolve_task(task, loaded.format, samples, Path(path), warn=logging.getLogger(__name__).warning)
    items = [InspectSample(input=[ChatMessageUser(content=prompt_content(s))], target=s.answer or "", id=s.id,
                           metadata={KEY: sample_metadata(s, position, loaded.format, task)})
             for position, s in enumerate(samples)]
    run = {"dataset": str(path), "format": loaded.format, "task": task, "split": split, "labels": labels,
           "images_root": images_root, "counts": loaded.counts,
           "order": [[s.id, (s.metadata or {}).get("index", s.id)] for s in samples]}
    return MemoryDataset(items, name=Path(path).stem, location=str(path)), _plain(run)
