"""Whether a run's answer matches its label, read in the item's own answer type (not the run's task)."""

from __future__ import annotations

from ..datasets.answer_types import AnswerType

YESNO_LABELS = {"1": "yes", "0": "no", "true": "yes", "false": "no"}  # DataCV Task I writes its labels as 1/0


def matches_label(answer: str | None, label: str | None, task: int, kind: AnswerType | None) -> bool | None:
    """Whether the agent's answer (already read from its reply) is the label; None when there is no label or no
    answer. `kind` is the item's answer type (`answer_types.of_sample`):
    a 1/0 label means yes/no only for a yes/no item, never for a count whose gold is 1; only an item whose type
    nothing states (None) falls back to the task's form, Task I yes/no."""
    if label is None or answer is None:
        return None
    yesno = kind.kind == "yesno" if kind is not None else task == 1
    label = str(label).strip().lower().strip("()")
    return str(answer).strip().lower() == (YESNO_LABELS.get(label, label) if yesno else label)
