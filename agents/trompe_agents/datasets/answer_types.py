"""What kind of answer an item asks for, so the agent's final-answer schema and instruction follow the item.

Kinds: `yesno`, `choice` (one option letter of N), `integer` (a count), `pair` (two integers, e.g. a grid's
"rows,columns"), `letter` (one character, e.g. BlindTest's circled letter), `string` (a short answer, e.g. TeT's
characters "EJ"), `text` (free text) and `reply` (the answer written as the question itself asks for it, handed
to another harness unchanged: an lmms-eval task reads it by its own rules). yes/no and choice keep the exact schema
the DataCV challenge wants (`final_answer.choice_schema`); integer, pair, letter and string constrain `answer` with
a pattern that `final_answer.reformat` also reads, so "{3}" is taken as 3 and "rows={5} columns={6}" as "5,6".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..final_answer import INTEGER, LETTER, PAIR, SHORT, choice_schema, option_letters
from .forms import shape_of
from .blindtest import ANSWER_TYPES as BLINDTEST_TYPES, task_name

KINDS = ("yesno", "choice", "integer", "pair", "letter", "string", "text", "reply")
PATTERNS = {"integer": INTEGER, "pair": PAIR, "letter": LETTER, "string": SHORT}
DESCRIPTIONS = {
    "integer": "a whole number in digits, e.g. 3",
    "pair": "two whole numbers in the order the question names them, comma-separated, e.g. 5,6 for 5 rows and "
            "6 columns",
    "letter": "one letter or character, e.g. a",
    "string": "the short answer itself (a few characters or words, no sentence), e.g. DK",
    "text": "your answer",
    "reply": "the answer written exactly in the form the question asks for (its brackets, option letter, words or "
             "number), nothing else",
}


@dataclass(frozen=True)
class AnswerType:
    """One item's answer kind; `options` is the number of options of a `choice` item."""

    kind: str
    options: int = 0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"answer type must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.kind == "choice":
            option_letters(self.options)  # 1..8 options, else a clear error

    def schema(self) -> dict[str, Any]:
        """The final answer's JSON schema: reasons first, then the answer in this kind's form."""
        if self.kind == "yesno":
            return choice_schema(["yes", "no"])
        if self.kind == "choice":
            return choice_schema(option_letters(self.options))
        answer: dict[str, Any] = {"type": "string", "description": DESCRIPTIONS[self.kind]}
        if self.kind in PATTERNS:
            answer["pattern"] = PATTERNS[self.kind]
        return {"type": "object", "additionalProperties": False, "required": ["reasons", "answer"],
                "properties": {"reasons": {"type": "string"}, "answer": answer}}

    def instruction(self) -> str:
        """One line telling the model this item's answer form (it overrides the task prompt's yes/no or A-D)."""
        if self.kind == "yesno":
            return 'Answer format: `"answer"` is "yes" or "no".'
        if self.kind == "choice":
            letters = option_letters(self.options)
            return f'Answer format: `"answer"` is one option letter, {", ".join(letters)}.'
        if self.kind == "reply":  # the question's own form, whatever it is (a yes/no or a letter included)
            return f'Answer format: `"answer"` is {DESCRIPTIONS[self.kind]}.'
        return f'Answer format: `"answer"` is {DESCRIPTIONS[self.kind]} (not yes/no, not an option letter).'

    def describe(self) -> str:
        return f"choice:{self.options}" if self.kind == "choice" else self.kind

    def extractor(self) -> str:
        """The answer form (forms.py) that reads this kind from free text (SEVEX's target replies)."""
        return "string" if self.kind in ("text", "reply") else self.kind  # forms.py names its forms by kind


def parse(value: str) -> AnswerType:
    """'integer', 'choice:4' (as `describe` writes it) -> AnswerType; a clear error otherwise."""
    kind, _, options = value.partition(":")
    if kind == "choice" and not options.isdigit():
        raise ValueError(f"answer type: write a choice as 'choice:N' (N options), got {value!r}")
    return AnswerType(kind, int(options) if options else 0)


def of_sample(sample) -> AnswerType | None:
    """A sample's answer type: options -> choice, else its loader's, else its BlindTest task's (probe families
    carry those names), else the gold answer's shape; None when nothing says (an unlabelled generic item, or a
    gold 1/0, which DataCV Task I writes for yes/no): the agent's task decides, Task I yes/no, Task II A-D."""
    if sample.choices:
        return AnswerType("choice", len(sample.choices))
    if sample.answer_type:
        return parse(sample.answer_type)
    if sample.category and (kind := BLINDTEST_TYPES.get(task_name(sample.category))):
        return AnswerType(kind)
    if sample.answer is not None and str(sample.answer).strip() not in ("0", "1"):
        return AnswerType(shape_of(str(sample.answer)))
    return None
