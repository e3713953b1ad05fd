"""The tasks SEVEX explores: what the question asks, the answer format, and how answers are read."""

from __future__ import annotations

from dataclasses import dataclass

from ..datasets.answer_types import of_sample
from ..datasets.base import Sample
from ..datasets.blink import subtask_key
from .scoring import Scored, score_bounded, score_text


@dataclass(frozen=True)
class Task:
    name: str
    benchmark: str  # blindtest | blink | probes: picks the answer extractor
    description: str
    answer_format: str
    tags: tuple[str, ...] = ("core", "analysis", "vision")  # tool tags the visual prompts may use
    aliases: tuple[str, ...] = ()  # other sample categories that are this task (the loaders' names)

    def samples(self, samples: list[Sample]) -> list[Sample]:
        """This task's labelled samples of a mixed benchmark file (BlindTest and BLINK hold many tasks in one
        file); subtask names match with spaces or underscores ("Relative Depth" is Relative_Depth)."""
        samples = [s for s in samples if s.answer is not None and not s.error]  # never scored: dropped
        if self.benchmark not in ("blindtest", "blink"):
            return samples
        names = {subtask_key(n) for n in (self.name, *self.aliases)}
        mine = [s for s in samples if s.category and subtask_key(s.category) in names]
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
        """How this item's reply is read: BLINK as its official pipeline reads it, any other item by its answer
        type (the one `illusion-agent run` asks for, datasets/answer_types.py), else by the benchmark."""
        if self.benchmark == "blink":
            return "blink"
        kind = of_sample(sample)
        return kind.extractor() if kind else self.benchmark


_BLINDTEST_COUNT = "a number in curly brackets, e.g. {2}"
_BLINK = "the option letter in parentheses, e.g. (A)"

TASKS = {t.name: t for t in [
    Task("LineIntersections", "blindtest", "Two piecewise-linear functions are drawn as coloured lines; count "
         "how many times they intersect (0, 1 or 2).", _BLINDTEST_COUNT),
    Task("CircledLetter", "blindtest", "A word is shown with one letter circled in red; name the circled "
         "letter.", "the letter in curly brackets, e.g. {k}"),
    Task("SubwayMap", "blindtest", "A subway-like map draws coloured paths between stations; count the "
         "single-colour paths between two named stations.", _BLINDTEST_COUNT),
    Task("OverlappingShapes", "blindtest", "Two circles are drawn; say whether they touch or overlap.",
         "Yes or No in curly brackets, e.g. {Yes}", aliases=("TouchingCircles",)),
    Task("TouchingCircles", "blindtest", "Two circles are drawn; say whether they touch or overlap.",
         "Yes or No in curly brackets, e.g. {Yes}", aliases=("OverlappingShapes",)),
    Task("NestedSquares", "blindtest", "Squares are drawn nested inside each other; count them.",
         _BLINDTEST_COUNT),
    Task("CountingRowsAndColumns", "blindtest", "A grid is drawn; count its rows and columns.",
         "rows and columns in curly brackets, e.g. {3} {4}"),
    Task("Jigsaw", "blink", "An image has a missing piece; choose which of two candidate pieces completes it.",
         _BLINK),
    Task("Relative_Depth", "blink", "Two points A and B are marked; which one is closer to the camera?", _BLINK),
    Task("Spatial_Relation", "blink", "Answer a question about the 3-D spatial relation between objects.",
         _BLINK),
    Task("Semantic_Correspondence", "blink", "A point is marked on one image; choose the semantically "
         "corresponding point among the marked options in a second image of another instance.", _BLINK),
    Task("Visual_Correspondence", "blink", "A point is marked on one image; choose the point showing the same "
         "physical spot in a second photo of the same scene.", _BLINK),
    Task("probes", "probes", "Yes/no questions about classic visual illusions and counterfactual variants; "
         "judge the physical stimulus, not the impression.", "yes or no"),
]}


def get_task(name: str, description: str | None = None) -> Task:
    """A known task, or a custom one when a description is given."""
    if name in TASKS:
        return TASKS[name]
    if description:
        return Task(name, "auto", description, "a short answer")  # the gold answer's shape picks the extractor
    raise ValueError(f"--task: unknown task {name!r}; known: {', '.join(TASKS)} "
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
