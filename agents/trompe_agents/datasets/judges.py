"""The harnesses' model matchers as opt-in fallbacks, through any configured backend (`--judge-backend`).

Where a harness asks an LLM what a reply answers, trompe asks the configured backend the same question, in our
own wording of that harness's request, for the same replies (those its rules read nothing in; HallusionBench's
own judge reads every reply). The judge's verdict, read by the harness's own rule, becomes the text the scorer
reads, and `decided_by` names the judge for that item. One request per reply: where a harness retries an
unreadable verdict (VLMEvalKit 3 times, then a random option; 5 times at rising temperature for yes/no), an
unreadable verdict here is no answer (Z / Unknown / unclear).

- BLINK official: zeyofu/BLINK_Benchmark eval/multiple_choice.py `match_multiple_choice` (2d6a779), for the
  replies `blink_match.match` reads no option in;
- BLINK vlmevalkit: open-compass/VLMEvalKit vlmeval/dataset/utils/multiple_choice.py `extract_answer_from_item`
  with `build_prompt_blink` (e8e78f0), for the replies `can_infer` reads none in; its verdict read by `can_infer`;
- V* vlmevalkit: the same, with the generic `build_prompt`;
- HallusionBench official and lmms-eval: tianyi-lab/HallusionBench utils.py `evaluate_by_chatgpt`, as lmms-eval
  vendors it (lmms_eval/tasks/hallusion_bench/utils.py, evaluate_hb.py `hb_aggregation_result`, 75571cf): every
  reply is judged against the reference answer (`gt_answer_details`) as correct, incorrect or unclear, in place of
  trompe's yes/no reading (lmms-eval: the image split only, the questions it scores); the verdict becomes the
  label, its opposite, or no answer, which `assign_correctness` then reads;
- HallusionBench vlmevalkit: vlmeval/dataset/image_yorn.py `evaluate`, utils/yorn.py `YOrN_match_prompt` and
  `YOrN_auxeval` (e8e78f0), for the replies `YOrN_Extraction` reads Unknown; its verdict read the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..backends.base import Backend
from ..messages import Message, TextPart
from . import blink_judge, blink_match, vlmeval_match

Record = dict[str, Any]


@dataclass(frozen=True)
class Judge:
    """One harness's matcher: which replies it is asked about, what it is asked, and how its verdict reads."""

    unread: Callable[[str, Record], bool]  # the harness's rules read no answer in this reply
    prompt: Callable[[str, Record], str]
    verdict: Callable[[str, Record], str]  # the judge's text -> the reply the scorer then reads


def _question(record: Record) -> str:
    return str(record.get("question") or "")


def _options(record: Record) -> str:
    return "\n".join(f"{letter}. {text}" for letter, text in vlmeval_match.options(record.get("choices")).items())


def vlmeval_mcq_prompt(text: str, record: Record, blink: bool = False) -> str:
    """VLMEvalKit's request (`build_prompt`; `build_prompt_blink` adds refusals and "selects no option" to Z)."""
    none = ("If the answer refuses, says it cannot help, selects no option, or means none of the options, "
            "output Z. " if blink else "If the answer means none of the options, output Z. ")
    return ("Match an answer to the most similar option of a single-choice question. " + none
            + "Output one letter: one of the option letters, or Z.\n\n"
            f"Question: {_question(record)}\nOptions:\n{_options(record)}\nZ. none\nAnswer: {text}\nYour output:")


def vlmeval_mcq_verdict(output: str, record: Record) -> str:
    """`can_infer` over the judge's output; Z where it reads none."""
    return vlmeval_match.exact_matching(output, record.get("choices")).letter or "Z"


def vlmeval_yorn_prompt(text: str, record: Record) -> str:
    """VLMEvalKit's `YOrN_match_prompt`: Yes, No or Unknown for an answer to a yes/no question."""
    return ("Match an answer to a yes/no question with Yes or No, whichever it means; output Unknown if it means "
            "neither. Output one word: Yes, No or Unknown.\n\n"
            f"Question: {_question(record)}\nAnswer: {text}\nYour output:")


def _yorn_unread(text: str, record: Record) -> bool:
    """A reply VLMEvalKit scores (one shown a figure) that `YOrN_Extraction` reads as Unknown."""
    shown = str((record.get("keys") or {}).get("visual_input", "1")) != "0"
    return shown and vlmeval_match.vlmeval_yes_no(text) == "Unknown"


def hallusion_prompt(text: str, record: Record) -> str:
    """`evaluate_by_chatgpt`'s request: does the prediction agree with, conflict with, or leave unclear the
    reference answer (the item's `gt_answer_details`, else its yes/no label)?"""
    keys = record.get("keys") or {}
    reference = keys.get("gt_answer_details") or str(record.get("label") or "")
    return ("Read the question, the reference answer and the predicted answer, and judge the prediction. Output "
            "correct if it does not conflict with the reference answer, incorrect if it conflicts with it, and "
            "unclear if the prediction leaves the answer unclear. Output one word.\n\n"
            f"Question: {_question(record)}\nReference answer: {reference}\nPredicted answer: {text}\nOutput:")


def hallusion_verdict(output: str, record: Record) -> str:
    """The reply the scorer then reads: "incorrect" anywhere -> the other answer, else "correct" -> the label,
    else none (unclear), tested in that order as `evaluate_by_chatgpt` does."""
    said, label = output.lower(), str(record.get("label") or "").lower()
    if "incorrect" in said:
        return {"yes": "no", "no": "yes"}.get(label, "")
    return label if "correct" in said else ""


def _blink_verdict(output: str, record: Record) -> str:
    return blink_judge.verdict(output, len(record.get("choices") or [])) or blink_judge.NONE


JUDGES: dict[tuple[str, str], Judge] = {
    ("blink", "official"): Judge(
        lambda text, r: bool(r.get("choices")) and blink_match.match(text, r.get("choices")).rule == "no option",
        lambda text, r: blink_judge.judge_prompt(_question(r), r.get("choices") or [], text), _blink_verdict),
    ("blink", "vlmevalkit"): Judge(
        lambda text, r: vlmeval_match.infer(text, r.get("choices")) is None,
        lambda text, r: vlmeval_mcq_prompt(text, r, blink=True), vlmeval_mcq_verdict),
    ("vstar", "vlmevalkit"): Judge(
        lambda text, r: vlmeval_match.infer(text, r.get("choices")) is None, vlmeval_mcq_prompt,
        vlmeval_mcq_verdict),
    ("hallusionbench", "official"): Judge(lambda text, r: True, hallusion_prompt, hallusion_verdict),
    ("hallusionbench", "lmms-eval"): Judge(
        lambda text, r: str((r.get("keys") or {}).get("visual_input", "1")) != "0", hallusion_prompt,
        hallusion_verdict),
    ("hallusionbench", "vlmevalkit"): Judge(_yorn_unread, vlmeval_yorn_prompt,
                                           lambda output, r: vlmeval_match.vlmeval_yes_no(output)),
}


def judge_for(fmt: str | None, scorer: str) -> Judge:
    """The matcher of `scorer` for `fmt`; a clear error naming the scorers that have one."""
    if (fmt or "", scorer) not in JUDGES:
        having = ", ".join(f"{f} {s}" for f, s in JUDGES)
        raise ValueError(f"--judge-backend: {fmt or 'this dataset'} {scorer} has no model matcher; these do: "
                         f"{having}")
    return JUDGES[(fmt or "", scorer)]


async def judge_unread(backend: Backend, judge: Judge, records: list[Record], reply) -> dict[str, str]:
    """Per record id, the reply the scorer reads after the judge, for each labelled reply its rules read none
    in (`reply(record)`: the text the scorer reads, scorers.reply)."""
    judged: dict[str, str] = {}
    for record in records:
        text = reply(record)
        if record.get("label") is None or not text or not judge.unread(text, record):
            continue
        turn = await backend.complete([Message("user", [TextPart(judge.prompt(text, record))])], [],
                                      max_output_tokens=16)
        judged[str(record["id"])] = judge.verdict(turn.message.text or "", record)
    return judged
