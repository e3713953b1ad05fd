"""The tasks SEVEX explores: what the question asks, the answer format, and how answers are read.

Each benchmark declares its own (`Benchmark.sevex_tasks`, datasets/benchmark.py); a custom task is named with a
description (`--task-description`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..datasets.answer_types import of_sample
from ..datasets.base import Sample
from ..datasets.benchmarks import benchmarks, find
from ..datasets.harness import category_key
from .scoring import Scored, score_bounded, score_text


@dataclass(frozen=True)
class Task:
    name: str
    benchmark: str  # a registered benchmark's name, or an answer form ("auto"): picks the answer extractor
    description: str
    answer_format: str
    tags: tuple[str, ...] = ("core", "analysis", "vision")  # tool tags the visual prompts may use
    categories: tuple[str, ...] | None = None  # the sample categories that are this task (None: every sample)

    def samples(self, samples: list[Sample]) -> list[Sample]:
        """This task's labelled samples of a mixed benchmark file (BlindTest and BLINK hold many tasks in one
        file); category names match with spaces or underscores ("Relative Depth" is Relative_Depth)."""
        samples = [s for s in samples if s.answer is not None and not s.error]  # never scored: dropped
        if self.categories is None:
            return samples
        names = {category_key(n) for n in self.categories}
        mine = [s for s in samples if s.category and category_key(s.category) in names]
        found = sorted({s.category for s in samples if s.category})
        if not mine and found:
            raise ValueError(f"--dev: no {self.name} samples in this dataset; its tasks are: {', '.join(found)}")
        return mine or samples

    def score(self, raw: str, sample: Sample) -> tuple[str | None, bool]:
        """The answer read from the target's reply with the item's extractor, and whether it is right; a
        sample with options reads option letters ("(B)" is B), whatever the task."""
        return score_text(self.reader(sample), raw, sample.answer, sample.choices)

    async def score_bounded(self, raw: str, sample: Sample) -> Scored:
        """`score` within a size cap and a time budget, never raising (sevex/scoring.py): how a run scores."""
        return await score_bounded(self.reader(sample), raw, sample.answer, sample.choices)

    def reader(self, sample: Sample) -> str:
        """How this item's reply is read: by its benchmark's own extractor where it has one (BLINK, as its
        official pipeline reads it), else by the item's answer type (the one `illusion-agent run` asks for,
        datasets/answer_types.py), else by the benchmark."""
        benchmark = find(self.benchmark)
        if benchmark is not None and benchmark.extractor is not None:
            return benchmark.name
        kind = of_sample(sample)
        return kind.extractor() if kind else self.benchmark


def known_tasks() -> dict[str, Task]:
    """Every registered benchmark's SEVEX tasks by name."""
    return {t.name: Task(t.name, benchmark.name, t.description, t.answer_format, t.tags, t.categories)
            for benchmark in benchmarks().values() for t in benchmark.sevex_tasks}


def get_task(name: str, description: str | None = None) -> Task:
    """A known task, or a custom one when a description is given."""
    known = known_tasks()
    if name in known:
        return known[name]
    if description:
        return Task(name, "auto", description, "a short answer")  # the gold answer's shape picks the extractor
    raise ValueError(f"--task: unknown task {name!r}; known: {', '.join(known)} "
                     "(or pass --task-description for a custom task)")


def question_text(sample: Sample) -> str:
    """What the target is asked: BLINK's full prompt (question and lettered options) when the row has one."""
    prompt = sample.metadata.get("prompt")
    if isinstance(prompt, str) and prompt.strip():
        return prompt
    missing = [c for c in sample.choices or [] if c not in sample.question]
    if not missing:
        return sample.question
    lettered = [c if c.lstrip().startswith("(") else f"({chr(65 + i)}) {c}" for i, c in enumerate(sample.choices)]
    return sample.question + "\nSelect from the following choices.\n" + "\n".join(lettered)
