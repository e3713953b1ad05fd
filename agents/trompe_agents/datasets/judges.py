"""The harnesses' model matchers as opt-in fallbacks, through any configured backend (`--judge-backend`).

Where a harness asks an LLM what a reply answers, trompe asks the configured backend the same question, in our
own wording of that harness's request, for the same replies (those its rules read nothing in; HallusionBench's
own judge reads every reply). The judge's verdict, read by the harness's own rule, becomes the text the scorer
reads, and `decided_by` names the judge for that item. Each benchmark declares its judges (`Benchmark.judges`, in
its own module). One request per reply: where a harness retries an
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

from collections.abc import Callable, Iterable

from ..backends.base import Backend
from ..messages import Message, TextPart
from ..records import SampleResult
from .benchmark import Judge
from .benchmarks import benchmarks


def judge_for(fmt: str | None, scorer: str) -> Judge:
    """The matcher of `scorer` for `fmt`; a clear error naming the scorers that have one."""
    benchmark = benchmarks().get(fmt or "")
    if benchmark is None or scorer not in benchmark.judges:
        having = ", ".join(f"{name} {s}" for name, b in benchmarks().items() for s in b.judges)
        raise ValueError(f"--judge-backend: {fmt or 'this dataset'} {scorer} has no model matcher; these do: "
                         f"{having}")
    return benchmark.judges[scorer]


async def judge_unread(backend: Backend, judge: Judge, records: Iterable[SampleResult],
                       reply: Callable[[SampleResult], str | None]) -> dict[str, str]:
    """Per record id, the reply the scorer reads after the judge, for each labelled reply its rules read none
    in (`reply(record)`: the text the scorer reads, scorers.reply)."""
    judged: dict[str, str] = {}
    for record in records:
        text = reply(record)
        if not record.labelled or not text or not judge.unread(text, record):
            continue
        turn = await backend.complete([Message("user", [TextPart(judge.prompt(text, record))])], [],
                                      max_output_tokens=16)
        judged[record.id] = judge.verdict(turn.message.text or "", record)
    return judged
