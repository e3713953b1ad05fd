"""What a judge model is asked about the replies no rule reads, and how its verdict is read back.

BLINK's official matcher (zeyofu/BLINK_Benchmark eval/multiple_choice.py `match_multiple_choice`, commit 2d6a779)
asks which option an answer selects, (Z) for none; VLMEvalKit's `extract_answer_from_item` (open-compass/VLMEvalKit
vlmeval/dataset/utils/multiple_choice.py at e8e78f0) sends `build_prompt` (`build_prompt_blink` for BLINK, which
adds refusals to Z) and reads the output with `can_infer`. Both requests are in trompe's wording (blink_judge.py,
vlmeval_mcq.py); the texts are pinned whole, since a changed request changes what a judged item scores.
"""

from __future__ import annotations

import pytest

from trompe_agents.datasets import blink_judge, scorers, vlmeval_mcq
from trompe_agents.datasets.benchmarks import benchmarks
from runlines import result

RECORD = result({"question": "Which point is closer to the camera?", "choices": ["Point A", "Point B"]})
ASKED = ("Question: Which point is closer to the camera?\nOptions:\nA. Point A\nB. Point B\nZ. none\n"
         "Answer: The left one.\nYour output:")


def test_vlmevalkit_asks_its_judge_build_prompt_and_for_blink_build_prompt_blink():
    head = "Match an answer to the most similar option of a single-choice question. "
    tail = "Output one letter: one of the option letters, or Z.\n\n"
    assert vlmeval_mcq.prompt("The left one.", RECORD) == (
        head + "If the answer means none of the options, output Z. " + tail + ASKED)
    assert vlmeval_mcq.prompt("The left one.", RECORD, blink=True) == (
        head + "If the answer refuses, says it cannot help, selects no option, or means none of the options, "
        "output Z. " + tail + ASKED)
    assert "Question: \nOptions:\n" in vlmeval_mcq.prompt("x", result({"choices": ["a"]}))  # no question: an empty one


@pytest.mark.parametrize("fmt, blink", [("blink", True), ("vstar", False)])
def test_the_vlmevalkit_judge_is_asked_only_where_can_infer_reads_nothing_and_read_by_can_infer(fmt, blink):
    judge = benchmarks()[fmt].judges["vlmevalkit"]
    # the benchmark's, and one built now as its module builds it (V*: the default, build_prompt)
    for built in (judge, vlmeval_mcq.judge(blink=True) if blink else vlmeval_mcq.judge()):
        assert built.unread("The left one.", RECORD) and not built.unread("Point B", RECORD)
        assert built.prompt("The left one.", RECORD) == vlmeval_mcq.prompt("The left one.", RECORD, blink=blink)
        assert (built.verdict("B", RECORD), built.verdict("none of them", RECORD)) == ("B", "Z")


def test_blink_asks_its_judge_which_option_the_answer_selects():
    assert blink_judge.judge_prompt("Which point is closer?", ["Point A", "Point B"], "The left one.") == (
        "Match an answer to the option of a single-choice question that it selects. Reply with the option only, "
        "for example (B). Reply (Z) if the answer refuses, selects no option, or means none of them.\n\n"
        "Question: Which point is closer?\nOptions:\n(A) Point A\n(B) Point B\n(Z) none\nAnswer: The left one.\n"
        "Option:")


@pytest.mark.parametrize("text, count, expected", [
    ("(B)", 4, "(B)"), ("I think (D).", 4, "(D)"),
    ("(E)", 4, None), ("(E)", 5, "(E)"),  # a letter beyond the item's options is no verdict
    ("(Z)", 4, None), ("B", 4, None), ("", 4, None), (None, 4, None),
    ("(C) or (A)", 4, "(C)"),  # the first verdict stated
])
def test_the_blink_judge_s_verdict_is_its_first_option_within_the_item_s(text, count, expected):
    assert blink_judge.verdict(text, count) == expected


def test_a_harness_reads_an_answer_without_raw_text_in_the_form_the_item_s_prompt_asks():
    line = {"id": "1", "agent": "main", "answer": "2", "answer_type": "integer", "label": "2"}
    record = result(line)
    assert scorers.reply(record, "blindtest") == "{2}"  # BlindTest's prompt: the count in braces
    assert scorers.reply(record, "jsonl") == scorers.reply(record, None) == "2"  # no harness form: as it is
    assert scorers.reply(result({**line, "reply": "Two."}), "blindtest") == "Two."  # a raw reply is read as written


@pytest.mark.parametrize("fmt, name", [("blink", "BLINK"), ("vstar", "VStarBench")])
def test_the_score_json_names_vlmevalkit_s_dataset_class_and_its_overall_rule(fmt, name):
    """`illusion-agent score --json` writes this `rule` beside the numbers: VLMEvalKit's dataset name and class."""
    assert scorers.score(fmt, [], "vlmevalkit").rule == (
        f"VLMEvalKit {name} (ImageMCQDataset, report_acc): Overall over items")


def test_a_scorer_asked_of_a_set_without_a_format_is_refused_naming_what_it_offers():
    with pytest.raises(ValueError, match=r"^--scorer: this dataset offers official; got 'lmms-eval'$"):
        scorers.check(None, "lmms-eval")
