"""VLMEvalKit's multiple-choice path (ImageMCQDataset), shared by the benchmarks it scores that way (BLINK, V*):
the exact-matching scorer, its model judge, and the rule that read each reply."""

from __future__ import annotations

from ..records import SampleResult
from . import vlmeval_match
from .benchmark import Judge
from .harness import Render, Score, choice_score, micro


def score(records: list[SampleResult], write: Render, name: str) -> Score:
    """ImageMCQDataset under exact matching: `can_infer` (vlmeval_match) equals the answer letter, else Z;
    vlmeval/dataset/utils/multiple_choice.py `report_acc`: Overall = mean hit over items, then per category."""
    def right(text: str, record: SampleResult) -> bool:
        return vlmeval_match.exact_matching(text, record.choices).letter == record.label

    groups = choice_score(records, write, right)
    return Score("vlmevalkit", f"VLMEvalKit {name} (ImageMCQDataset, report_acc): Overall over items",
                 {"Overall": micro(groups)}, groups)


def decided_by(text: str, record: SampleResult) -> str:
    """The `vlmeval_match` rule that read the reply (option letter, option text, ...)."""
    return vlmeval_match.exact_matching(text, record.choices).rule


def question(record: SampleResult) -> str:
    return str(record.question or "")


def _options(record: SampleResult) -> str:
    return "\n".join(f"{letter}. {text}" for letter, text in vlmeval_match.options(record.choices).items())


def prompt(text: str, record: SampleResult, blink: bool = False) -> str:
    """VLMEvalKit's request (`build_prompt`; `build_prompt_blink` adds refusals and "selects no option" to Z)."""
    none = ("If the answer refuses, says it cannot help, selects no option, or means none of the options, "
            "output Z. " if blink else "If the answer means none of the options, output Z. ")
    return ("Match an answer to the most similar option of a single-choice question. " + none
            + "Output one letter: one of the option letters, or Z.\n\n"
            f"Question: {question(record)}\nOptions:\n{_options(record)}\nZ. none\nAnswer: {text}\nYour output:")


def verdict(output: str, record: SampleResult) -> str:
    """`can_infer` over the judge's output; Z where it reads none."""
    return vlmeval_match.exact_matching(output, record.choices).letter or "Z"


def judge(blink: bool = False) -> Judge:
    """VLMEvalKit's `extract_answer_from_item` matcher, asked about the replies `can_infer` reads none in."""
    return Judge(lambda text, r: vlmeval_match.infer(text, r.choices) is None,
                 lambda text, r: prompt(text, r, blink=blink), verdict)
