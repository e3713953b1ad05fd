"""VLMEvalKit's BLINK and V* scorers, and the harnesses' model matchers through `--judge-backend`.

Harness files, read at open-compass/VLMEvalKit e8e78f0 (each case names the line it follows):
- vlmeval/utils/matching_util.py: `can_infer_option` (l.18-61), `can_infer_text` (l.107-121), `can_infer` (l.124);
- vlmeval/dataset/utils/multiple_choice.py: `report_acc` (l.77-100), `extract_answer_from_item` (l.359-406),
  `eval_vanilla` (l.431-438);
- vlmeval/dataset/image_mcq.py: BLINK and VStarBench are ImageMCQDataset rows (l.107, l.127); no IllusionVQA;
- vlmeval/dataset/image_yorn.py `evaluate` (l.41-92) and utils/yorn.py `YOrN_auxeval` (l.264).
Records are result lines as `illusion-agent run` writes them (or saved replies imported with `reply`): BLINK's
options as its HF `choices`, V*'s as the loader reads its "(A) ..." lines, the letter in `label`.
"""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runlines import results, write_run
from trompe_agents.datasets.metrics import benchmark_metrics
from trompe_agents.datasets.scorers import decided_by
from trompe_agents.datasets.vlmeval_match import Inferred, exact_matching, infer, vlmeval_yes_no
from trompe_agents.illusion.cli import main as illusion_agent

POINTS = ["Point A", "Point B"]


pytestmark = pytest.mark.usefixtures("scripted_on_path")  # tests/conftest.py: the scripted models on sys.path


@pytest.mark.parametrize("reply, choices, expected", [
    ("B", POINTS, Inferred("B", "option letter")),  # l.47-53: one option letter among the words
    ("(B)", POINTS, Inferred("B", "option letter")),  # l.40-41: "()" become spaces
    ("Point B is closer.", POINTS, Inferred("B", "option letter")),  # l.52: index 1 > len(splits) - 5
    ("Point B is closer to the camera.", POINTS, None),  # l.52: 1 > 7 - 5 fails; l.109: too long for the texts
    # l.52: the one letter stands outside the last four words, l.57 finds no "answer is X" -> the text rule, which
    # refuses a reply more than twice as long as the options (l.109): nothing read
    ("The answer is (B) because it stands nearer to the camera than the other one.", POINTS, None),
    ("Z", POINTS, Inferred("Z", "letter Z")),  # l.54: no option letter, a lone Z
    ("Cannot determine the answer", POINTS, Inferred("Z", "refusal phrase")),  # l.24-31
    ("Failed to obtain answer via API", ["x", "y"], None),  # l.21: not even a refusal
    ("A or B, hard to say", POINTS, None),  # l.47: two letters are no answer
    ("b", POINTS, None),  # l.44-45: letters are matched as written; "b" is no option letter
    # l.57: "answer is X", the CoT form (the letter there also counts as a word, but two letters are present)
    ("Not A. The correct answer is **C**, since C is round.", ["p", "q", "r", "s"], Inferred("C", "answer is X")),
    ("the second image", ["the first image", "the second image"], Inferred("B", "option text")),  # l.117
    ("the first image or the second image", ["the first image", "the second image"], None),  # l.119: two texts
])
def test_can_infer_reads_a_reply_as_vlmevalkit_does(reply, choices, expected):
    assert infer(reply, choices) == expected


def test_exact_matching_scores_z_where_nothing_is_read():
    # extract_answer_from_item l.382-383: no judge under `exact_matching`: Z, which equals no answer (l.434)
    assert exact_matching("I think it is the nearer one.", POINTS) == Inferred("Z", "no option (exact matching: Z)")


@given(st.text(max_size=300), st.integers(2, 5))
def test_can_infer_never_raises_and_reads_only_option_letters_or_z(text, count):
    choices = [f"option {i}" for i in range(count)]
    found = exact_matching(text, choices)
    assert found.letter in [*"ABCDE"[:count], "Z"]


def blink(task: str, gold: str, reply: str | None, i: int) -> dict:
    return {"id": f"val_{task}_{i}", "label": gold, "category": task, "agent": "main",
            "answer": gold if reply is None else "x", "answer_type": "choice:2", "reply": reply, "choices": POINTS}


def test_blink_vlmevalkit_is_overall_over_items_and_differs_from_the_others():
    records = [blink("Relative_Depth", "B", "Point B is closer.", 0),
               blink("Relative_Depth", "B", "b", 1), blink("Relative_Depth", "A", "a", 2),
               blink("Jigsaw", "A", None, 3)]  # no raw reply: the agent's answer rendered "(A)"
    metrics = benchmark_metrics("blink", results(records), "vlmevalkit")
    # report_acc l.89-90: Overall = np.mean(hit) over every item; l.92-99 one column per category
    assert metrics.headline == {"Overall": pytest.approx(2 / 4)} and metrics.scorer == "vlmevalkit"
    assert metrics.groups == [("Jigsaw", 1.0, 1), ("Relative_Depth", pytest.approx(1 / 3), 3)]
    # lmms-eval _extract_answer_letter reads "b" and "a" as letters (and "Point B" as P)
    assert benchmark_metrics("blink", results(records), "lmms-eval").headline["accuracy"] == pytest.approx(3 / 4)
    assert decided_by("blink", results(records), "vlmevalkit") == {
        "val_Relative_Depth_0": "option letter", "val_Relative_Depth_1": "no option (exact matching: Z)",
        "val_Relative_Depth_2": "no option (exact matching: Z)", "val_Jigsaw_3": "option letter"}


def test_vstar_vlmevalkit_reads_the_agents_answer_and_option_texts():
    choices = ["The red car is on the left.", "The red car is on the right."]
    records = [{"id": str(i), "label": gold, "category": cat, "agent": "main", "answer": gold,
                "answer_type": "choice:2", "choices": choices, **({"reply": text} if text else {})}
               for i, (cat, gold, text) in enumerate([("direct_attributes", "A", None),
                                                      ("relative_position", "B", "The red car is on the right."),
                                                      ("relative_position", "A", "The car is red.")])]
    metrics = benchmark_metrics("vstar", results(records), "vlmevalkit")
    assert metrics.headline == {"Overall": pytest.approx(2 / 3)}  # can_infer_text l.117 reads the second
    assert dict((n, a) for n, a, _ in metrics.groups) == {"direct_attributes": 1.0, "relative_position": 0.5}


def test_a_harness_without_the_benchmark_is_refused_in_one_line_naming_the_scorers(tmp_path):
    # image_mcq.py (e8e78f0) lists no IllusionVQA: `--scorer vlmevalkit` is refused for it
    line = {"id": "1", "label": "A", "category": "color", "agent": "main", "answer": "A", "reply": "A",
            "choices": ["x", "y"]}
    out = write_run(tmp_path / "imported", format="illusionvqa", lines=[line])
    with pytest.raises(SystemExit) as exc:
        illusion_agent(["score", str(out), "--scorer", "vlmevalkit"])
    assert str(exc.value) == "illusion-agent score: --scorer: illusionvqa offers official, lmms-eval; got 'vlmevalkit'"
    with pytest.raises(SystemExit, match="^illusion-agent report: --scorer: illusionvqa offers official, lmms-eval"):
        illusion_agent(["report", str(out), "--scorer", "vlmevalkit"])


def test_the_vlmevalkit_judge_is_asked_only_where_can_infer_reads_nothing(tmp_path):
    """extract_answer_from_item l.380-396: the judge (build_prompt_blink for BLINK) only when can_infer fails,
    its output read by can_infer again; here the function backend's judge always names (B)."""
    import scripted_answers

    lines = [{**blink("Relative_Depth", gold, text, i), "question": "Which point is closer to the camera?"}
             for i, (gold, text) in enumerate([("B", "The one where the child sits."), ("A", "Point A"),
                                               ("A", "Hard to tell, maybe the left one.")])]
    out = write_run(tmp_path / "imported", format="blink", lines=lines)
    scripted_answers.JUDGED.clear()
    assert illusion_agent(["score", str(out), "--scorer", "vlmevalkit", "--output", str(tmp_path / "v.json"),
                           "--judge-backend", "function", "--judge-model", "scripted_answers:judge_says_b"]) == 0
    figures = json.loads((tmp_path / "v.json").read_text())
    assert figures["decided_by"]["items"] == {"val_Relative_Depth_0": "judge scripted_answers:judge_says_b",
                                              "val_Relative_Depth_1": "option letter",
                                              "val_Relative_Depth_2": "judge scripted_answers:judge_says_b"}
    assert figures["metric"] == {"Overall": pytest.approx(2 / 3)} and len(scripted_answers.JUDGED) == 2
    assert "A. Point A\nB. Point B\nZ. none" in scripted_answers.JUDGED[0]


def test_the_hallusionbench_yes_no_judge_reads_only_the_unknown_replies(tmp_path):
    """image_yorn.py evaluate l.61-82: YOrN_auxeval for the 'Unknown' extractions only, its output read by
    YOrN_Extraction; rows without an image are not scored (image_base.py skip_noimg) and so not judged."""
    import scripted_answers

    def hb(i: int, reply: str, gold: str, shown: str = "1") -> dict:
        keys = {"category": "VD", "subcategory": "illusion", "visual_input": shown, "set_id": str(i),
                "figure_id": "1", "question_id": "0"}
        return {"id": f"hb{i}", "label": gold, "agent": "main", "answer": "x", "reply": reply, "keys": keys,
                "question": "Are the two lines equal?"}

    lines = [hb(0, "Yes.", "yes"), hb(1, "They look equal to me.", "yes"), hb(2, "Hard to say.", "yes", shown="0")]
    out = write_run(tmp_path / "imported", format="hallusionbench", lines=lines)
    scripted_answers.JUDGED.clear()
    assert illusion_agent(["score", str(out), "--scorer", "vlmevalkit", "--output", str(tmp_path / "h.json"),
                           "--judge-backend", "function", "--judge-model", "scripted_answers:judge_says_yes"]) == 0
    figures = json.loads((tmp_path / "h.json").read_text())
    # VLMEvalKit scores only the questions shown a figure: 2 of the 3 labelled records
    assert figures["metric"]["aAcc"] == 1.0 and figures["counts"]["scored"] == 2
    assert figures["decided_by"]["items"] == {"hb1": "judge scripted_answers:judge_says_yes"}
    assert len(scripted_answers.JUDGED) == 1 and "They look equal to me." in scripted_answers.JUDGED[0]
    assert figures["judge"] == "scripted_answers:judge_says_yes" and figures["summary"].endswith("decided 1")


def test_hallusionbench_official_and_lmms_eval_judge_every_reply_against_the_reference(tmp_path):
    """utils.py evaluate_by_chatgpt (lmms-eval 75571cf l.29-88): each reply judged against gt_answer_details;
    "incorrect" anywhere -> 0 (l.72), else "correct" -> 1 (l.75), else 2 (unclear, l.78); assign_correctness then
    counts an unclear VS question without a figure as right; lmms-eval judges its image split only."""
    import scripted_answers

    def hb(i: int, reply: str, gold: str, details: str, category: str = "VD", figure: str = "1") -> dict:
        keys = {"category": category, "subcategory": "illusion", "set_id": str(i), "figure_id": figure,
                "question_id": "0", "visual_input": "0" if category == "VS" and figure == "0" else "1",
                "gt_answer_details": details}
        return {"id": f"hb{i}", "label": gold, "agent": "main", "answer": "x", "reply": reply, "keys": keys,
                "question": "Are the two lines equal?"}

    lines = [hb(0, "Yes, equal.", "yes", "Yes, the two lines are equal."),  # correct
             hb(1, "They are equal in length.", "no", "No, the top line is longer."),  # incorrect
             hb(2, "Maybe.", "no", "No, it is not.", category="VS", figure="0")]  # unclear, VS without figure
    out = write_run(tmp_path / "imported", format="hallusionbench", lines=lines)
    for scorer, judged, aacc in (("official", 3, 2 / 3), ("lmms-eval", 2, 1 / 2)):
        scripted_answers.JUDGED.clear()
        assert illusion_agent(["score", str(out), "--scorer", scorer, "--output", str(tmp_path / f"{scorer}.json"),
                               "--judge-backend", "function", "--judge-model",
                               "scripted_answers:judge_by_reference"]) == 0
        figures = json.loads((tmp_path / f"{scorer}.json").read_text())
        assert len(scripted_answers.JUDGED) == judged and figures["metric"]["aAcc"] == pytest.approx(aacc)
        assert set(figures["decided_by"]["items"].values()) == {"judge scripted_answers:judge_by_reference"}
    assert "Reference answer: No, the top line is longer." in scripted_answers.JUDGED[1]


@pytest.mark.parametrize("hostile", ["answer " * 30_000, "correct " * 30_000 + "answer", "A B " * 50_000,
                                     "answer is" + " " * 200_000, "{(" * 100_000])
def test_a_hostile_reply_is_read_in_linear_time(hostile):
    started = time.process_time()
    exact_matching(hostile, POINTS)
    vlmeval_yes_no(hostile)
    assert time.process_time() - started < 1.0
