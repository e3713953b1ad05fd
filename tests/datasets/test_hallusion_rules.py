"""HallusionBench's groups and judge requests, on records of the real shape where the groups' keys matter.

In tianyi-lab/HallusionBench HallusionBench.json set ids restart in every subcategory (VD/illusion set 0 and
VD/math set 0 are different sets) and VD and VS share subcategory names, so the official groups
(utils.py `get_eval_pair_all`: category_subcategory_set_id_question_id; `get_eval_fig`:
category_subcategory_set_id_figure_id; lmms-eval vendors the same in lmms_eval/tasks/hallusion_bench/utils.py
at 75571cf) need every part of their key, while VLMEvalKit's (vlmeval/dataset/utils/yorn.py `Hallusion_rating`
at e8e78f0) join the l2-category (the subcategory) with set and figure or question, without the category.
Every number below is worked out by hand in the docstring of its test.
"""

from __future__ import annotations

import pytest

from trompe_agents.datasets import hallusionbench
from trompe_agents.failures import ErrorKind
from trompe_agents.datasets.scorers import score
from trompe_agents.records import SampleResult
from runlines import result, results

# (name, category, subcategory, set, figure, question, answered right); every gold answer is "yes"
ITEMS = [("A", "VD", "illusion", "0", "0", "0", True), ("B", "VD", "illusion", "0", "1", "0", True),
         ("C", "VD", "math", "0", "0", "0", False), ("D", "VD", "math", "0", "1", "0", True),
         ("E", "VS", "illusion", "0", "1", "0", True), ("F", "VS", "illusion", "0", "1", "1", True)]


def records() -> list[dict]:
    """The six items as a run writes their records: each shown its figure, answered yes or (C) no."""
    out = []
    for name, category, sub, set_id, figure, question, right in ITEMS:
        keys = {"category": category, "subcategory": sub, "visual_input": "1", "set_id": set_id,
                "figure_id": figure, "question_id": question}
        answer = "yes" if right else "no"
        out.append(SampleResult.of_sample(name, label="yes", keys=keys, question=f"Question {name}?")
                   .with_answer(answer, "main", right).to_json())
    return out


@pytest.mark.parametrize("scorer", ["official", "lmms-eval"])
def test_official_groups_keep_category_and_subcategory_apart(scorer):
    """C alone is wrong: aAcc 5/6. Question groups (category, subcategory, set, question): VD_illusion_0_0 {A, B},
    VD_math_0_0 {C, D} fails, VS_illusion_0_0 {E}, VS_illusion_0_1 {F}: qAcc 3/4 (2/3 without the subcategory, or
    without the category). Figure groups (category, subcategory, set, figure): {A}, {B}, {C} fails, {D}, VS_illusion_0_1
    {E, F}: fAcc 4/5 (2/3 without the subcategory, 3/4 without the category). Every item has a figure, so
    lmms-eval's image split holds them all."""
    found = score("hallusionbench", results(records()), scorer)
    assert found.headline == pytest.approx({"aAcc": 5 / 6, "qAcc": 3 / 4, "fAcc": 4 / 5})
    assert found.groups == [("VD_illusion", 1.0, 2), ("VD_math", 0.5, 2), ("VS_illusion", 1.0, 2)]
    assert found.scored_ids == frozenset("ABCDEF")
    assert found.scorer == scorer


def test_vlmevalkit_groups_by_subcategory_without_the_category():
    """Figure groups (subcategory, set, figure): illusion_0_0 {A}, illusion_0_1 {B, E, F}, math_0_0 {C} fails,
    math_0_1 {D}: fAcc 3/4 (1/2 without the subcategory). Question groups (subcategory, set, question):
    illusion_0_0 {A, B, E}, math_0_0 {C, D} fails, illusion_0_1 {F}: qAcc 2/3 (1/2 without it). Per subcategory:
    illusion 4 of 4, math 1 of 2."""
    found = score("hallusionbench", results(records()), "vlmevalkit")
    assert found.headline == pytest.approx({"aAcc": 5 / 6, "fAcc": 3 / 4, "qAcc": 2 / 3})
    assert found.groups == [("illusion", 1.0, 4), ("math", 0.5, 2)]
    assert found.scored_ids == frozenset("ABCDEF")


def test_a_question_without_a_figure_is_out_of_the_image_only_scorers():
    """visual_input "0" (a VS question asked with no figure): lmms-eval's image split and VLMEvalKit's image
    dataset leave it out; a record without visual_input (an older run) counts as shown its figure."""
    rows = records()
    rows[5]["keys"] = {**rows[5]["keys"], "visual_input": "0", "figure_id": "0"}
    del rows[4]["keys"]["visual_input"]
    for scorer in ("lmms-eval", "vlmevalkit"):
        assert score("hallusionbench", results(rows), scorer).scored_ids == frozenset("ABCDE")
    assert score("hallusionbench", results(rows), "official").scored_ids == frozenset("ABCDEF")


def test_the_correctness_judge_is_asked_against_the_reference_details_else_the_label():
    record = result({"question": "Is the left line longer?", "label": "no",
                     "keys": {"gt_answer_details": "The two lines are equal."}})
    head = ("Read the question, the reference answer and the predicted answer, and judge the prediction. Output "
            "correct if it does not conflict with the reference answer, incorrect if it conflicts with it, and "
            "unclear if the prediction leaves the answer unclear. Output one word.\n\n")
    assert hallusionbench.hallusion_prompt("Yes, it is.", record) == (
        head + "Question: Is the left line longer?\nReference answer: The two lines are equal.\n"
        "Predicted answer: Yes, it is.\nOutput:")
    assert hallusionbench.hallusion_prompt("Yes.", result({"question": "Q?", "label": "no"})) == (
        head + "Question: Q?\nReference answer: no\nPredicted answer: Yes.\nOutput:")
    assert "Reference answer: \n" in hallusionbench.hallusion_prompt("Yes.", result({"question": "Q?"}))


def test_vlmevalkit_s_yes_no_judge_is_asked_yes_no_or_unknown():
    assert hallusionbench.vlmeval_yorn_prompt("It looks so.", result({"question": "Is it bent?"})) == (
        "Match an answer to a yes/no question with Yes or No, whichever it means; output Unknown if it means "
        "neither. Output one word: Yes, No or Unknown.\n\nQuestion: Is it bent?\nAnswer: It looks so.\n"
        "Your output:")


@pytest.mark.parametrize(("output", "label", "read"), [
    ("Incorrect", "yes", "no"), ("incorrect.", "no", "yes"),  # "incorrect" is tested first: it holds "correct"
    ("Correct", "yes", "yes"), ("CORRECT", "No", "no"),
    ("unclear", "yes", ""), ("", "no", ""),
    ("incorrect", None, ""), ("correct", None, "")])  # no label: nothing to read
def test_the_judge_s_verdict_becomes_the_reply_the_scorer_reads(output, label, read):
    """evaluate_by_chatgpt: "incorrect" anywhere gives the other answer, else "correct" the label, else unclear."""
    assert hallusionbench.hallusion_verdict(output, result({"label": label})) == read


@pytest.mark.parametrize("scorer", ["official", "lmms-eval", "vlmevalkit"])
def test_a_failed_record_is_wrong_for_every_scorer(scorer):
    """No answer to read: VLMEvalKit's Unknown, the official rules' unclear (right only for a VS question with no
    figure, which these are not): item A fails, so aAcc is 4/6."""
    rows = records()
    rows[0] = SampleResult.from_json(rows[0]).with_failure(ErrorKind.RUN, "boom").to_json()
    assert score("hallusionbench", results(rows), scorer).headline["aAcc"] == pytest.approx(4 / 6)
