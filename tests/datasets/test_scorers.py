"""Each named scorer holds its harness's rules, on replies built to that harness's record schema.

Harness files (read at these commits; each case names the line it follows):
- lmms-eval: EvolvingLMMs-Lab/lmms-eval 75571cf, lmms_eval/tasks/{vlmsareblind,hallusion_bench,blink,illusionvqa,
  vstar_bench}/...
- VLMEvalKit: open-compass/VLMEvalKit e8e78f0, vlmeval/dataset/image_mcq.py (VLMBlind), image_yorn.py and
  utils/yorn.py (HallusionBench), vlmeval/smp/misc.py (process_punctuation).
- Official: tianyi-lab/HallusionBench utils.py (as vendored by lmms-eval), zeyofu/BLINK_Benchmark 2d6a779
  eval/evaluate.py and eval/test_benchmark.py (63137e4), csebuetnlp/IllusionVQA 9e1c2b8
  evaluation_code/generic_eval.ipynb, penghao-wu/vstar 4ede664 vstar_bench_eval.py, VLMs Are Blind Table 1.
Records are result lines as `illusion-agent run` writes them, with `reply` holding the raw text where a harness
reads the raw reply.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from trompe_agents.datasets import blink_match
from trompe_agents.datasets.metrics import benchmark_metrics
from trompe_agents.datasets.blindtest import lmms_blindtest_parse
from trompe_agents.datasets.blink import lmms_blink_letter
from trompe_agents.datasets.scorers import render
from trompe_agents.datasets.vlmeval_match import vlmeval_yes_no
from trompe_agents.datasets.vstar import lmms_vstar_letter
from trompe_agents.illusion.cli import main as illusion_agent
from runlines import result, results, written

from replicas import write_blindtest_hf
from test_answer_types import SCRIPTED

pytestmark = pytest.mark.usefixtures("scripted_on_path")  # tests/conftest.py: the scripted models on sys.path


def blind(task: str, gold: str, text: str | None, label: str | None = None, i: int = 0) -> dict:
    """A BlindTest record: HF `task` and `groundtruth` in keys (as runner.metric_keys keeps them)."""
    return {"id": f"{task}-{i}-{text}", "label": label or gold.lower(), "category": task, "agent": "main",
            "answer": "x" if text is not None else None, "reply": text, "keys": {"task": task, "groundtruth": gold}}


def score(fmt: str, records: list[dict], scorer: str) -> tuple[dict, dict]:
    m = benchmark_metrics(fmt, results(records), scorer)
    return m.headline, {name: accuracy for name, accuracy, _ in m.groups}


# ---- BlindTest: the mixed replies, read three ways

MIXED = [("Line Plot Intersections", "2", "{2}"), ("Line Plot Intersections", "2", "2"),
         ("Counting Grid - Blank Grids", "6,5", "There are 6 rows and 5 columns."),
         ("Olympic Counting - Circles", "5", "I count five of them."),
         ("Circled Letter", "u", "The circled letter is 'u'."),
         ("Touching Circles", "Yes", "Yes, they touch."),
         ("Counting Grid - Word Grids", "4,3", "rows={4} columns={3}"),
         ("Olympic Counting - Pentagons", "5", "I see 15 pentagons"),
         ("Nested Squares", "3", "{3}")]


def mixed() -> list[dict]:
    return [blind(task, gold, text, "6,5" if "6 rows" in text else None, i) for i, (task, gold, text) in
            enumerate(MIXED)]


def test_lmms_eval_blindtest_reads_each_reply_as_parse_response_does():
    # utils.py parse_response: touching circles must be exactly yes/no; numbers: the first \{?(\d+)\}?;
    # circled letter: the first [a-z] of the lowercased reply ("the circled..." reads "t")
    assert lmms_blindtest_parse("Yes, they touch.", "Touching Circles") is None
    assert lmms_blindtest_parse(" Yes ", "Touching Circles") == "yes"
    assert lmms_blindtest_parse("I see 15 pentagons", "Olympic Counting - Pentagons") == "15"
    assert lmms_blindtest_parse("The circled letter is 'u'.", "Circled Letter") == "t"
    assert lmms_blindtest_parse("{3} {4}", "Counting Grid - Word Grids") == "3,4"  # {3}{4} form
    assert lmms_blindtest_parse("(3, 4)", "Counting Grid - Blank Grids") == "3,4"  # (3,4) form
    assert lmms_blindtest_parse("rows={3}  columns={4}", "Counting Grid - Blank Grids") is None  # one \s only
    headline, groups = score("blindtest", mixed(), "lmms-eval")
    # TASK_MAP: both Counting Grid tasks are "counting grid" -> 8 groups
    assert sorted(groups) == ["circled letter", "counting grid", "line plot intersections", "nested squares",
                              "olympic counting - circles", "olympic counting - pentagons", "touching circles"]
    assert groups["line plot intersections"] == 1.0 and groups["counting grid"] == 0.5
    # vlmsareblind_aggregate_by_task (lmms-eval 0.7.3): task_mean over every task with an item (7 here, 3 with a
    # right answer; commit 75571cf averaged those 3 only)
    assert headline["task_mean"] == pytest.approx((1.0 + 0.5 + 1.0) / 7)
    assert headline["accuracy"] == pytest.approx(4 / 9)


def test_vlmevalkit_blindtest_keeps_nine_tasks_and_its_exact_rules():
    headline, groups = score("blindtest", mixed(), "vlmevalkit")
    # VLMBlind.evaluate: braces for line intersections ("2" alone is wrong), substring for touching circles
    # and Olympic counting ("5" in "I see 15 pentagons" is right), rows/columns only with braces
    assert groups["Line Plot Intersections"] == 0.5 and groups["Touching Circles"] == 1.0
    assert groups["Olympic Counting - Pentagons"] == 1.0 and groups["Olympic Counting - Circles"] == 0.0
    assert groups["Counting Grid - Blank Grids"] == 0.0 and groups["Counting Grid - Word Grids"] == 1.0
    assert groups["Circled Letter"] == 0.0  # extract_content_in_braces: no braces, no answer
    assert len(groups) == 8 and headline["mean over tasks"] == pytest.approx(sum(groups.values()) / 8)
    assert score("blindtest", [blind("Circled Letter", "u", "{U}")], "vlmevalkit")[1]["Circled Letter"] == 0.0


@pytest.mark.parametrize(("text", "gold", "right"), [
    ("rows={5} columns={6}", "5,6", True), ("The grid is (5, 6).", "5,6", True),  # compare_string_with_values
    ("rows={5}, so (5, 6)", "5,6", True),  # rows without columns: the (r, c) pair is read instead
    ("(5, 7)", "5,6", False), ("rows={5} columns={6}", "5", False), ("rows={5} columns={6}", "5,6,7", False),
    ("rows={5} columns={6}", "x,y", False), ("no numbers", "5,6", False)])
def test_vlmevalkit_reads_a_grid_by_rows_and_columns_else_by_a_pair(text, gold, right):
    record = blind("Counting Grid - Blank Grids", gold, text, label=gold)
    assert score("blindtest", [record], "vlmevalkit")[1]["Counting Grid - Blank Grids"] == float(right)


def test_vlmevalkit_and_lmms_eval_compare_with_the_hf_groundtruth_not_trompe_s_label():
    """`groundtruth` (or VLMEvalKit's `answers`) as the file holds it: "O" is right for "{O}" in VLMEvalKit, whose
    circled letter keeps case, though trompe's label is "o"; without a groundtruth the label is compared, and
    without either nothing is right (an empty gold would be a substring of every reply)."""
    letter = blind("Circled Letter", "O", "{O}", label="o")
    assert score("blindtest", [letter], "vlmevalkit")[1]["Circled Letter"] == 1.0
    no_truth = {**blind("Olympic Counting - Circles", "3", "{4}", label="3"), "keys": {"task": "Olympic Counting - "
                                                                                       "Circles"}}
    assert score("blindtest", [no_truth], "vlmevalkit")[1]["Olympic Counting - Circles"] == 0.0
    assert score("blindtest", [{**no_truth, "reply": "{3}"}], "vlmevalkit")[1]["Olympic Counting - Circles"] == 1.0
    assert score("blindtest", [{**no_truth, "reply": "{3}"}], "lmms-eval")[1]["olympic counting - circles"] == 1.0


def test_lmms_eval_reads_touching_circles_no_and_a_letterless_reply_as_none():
    assert lmms_blindtest_parse(" No", "Touching Circles") == "no"
    assert lmms_blindtest_parse("{3}", "Circled Letter") is None
    assert lmms_blindtest_parse("{12} and {3}", "Nested Squares") == "12"


def test_a_blindtest_record_without_an_answer_is_wrong_for_every_harness_and_one_without_a_task_is_grouped_dash():
    failed = blind("Nested Squares", "3", None)
    for scorer, group in (("official", "Nested Squares"), ("lmms-eval", "nested squares"),
                          ("vlmevalkit", "Nested Squares")):
        assert score("blindtest", [failed, blind("Nested Squares", "3", "{3}", i=1)], scorer)[1] == {group: 0.5}
    untasked = {**blind("Nested Squares", "3", "{3}"), "category": None, "keys": {"groundtruth": "3"}}
    assert list(score("blindtest", [untasked], "vlmevalkit")[1]) == ["-"]


def test_official_blindtest_groups_as_the_papers_table_one():
    headline, groups = score("blindtest", mixed(), "official")
    assert "Counting Grid" in groups and "Olympic Counting - Circles" in groups and len(groups) == 7
    assert groups["Counting Grid"] == 1.0 and groups["Circled Letter"] == 1.0  # trompe's extractor reads both
    assert groups["Olympic Counting - Circles"] == 1.0  # "five" is 5


def test_the_agents_answers_are_rendered_in_the_prompts_form_for_the_harnesses():
    base = {"agent": "main", "id": "x"}
    assert render(result({**base, "answer": "5,6", "answer_type": "pair"}), "blindtest") == "rows={5} columns={6}"
    assert render(result({**base, "answer": "2", "answer_type": "integer"}), "blindtest") == "{2}"
    assert render(result({**base, "answer": "yes", "answer_type": "yesno"}), "blindtest") == "Yes"
    assert render(result({**base, "answer": "B", "answer_type": "choice:4"}), "blink") == "(B)"
    assert render(result({**base, "answer": "B", "answer_type": "choice:4"}), "illusionvqa") == "B"
    assert render(result({**base, "answer": "B", "agent": "default"}), "blink") is None  # an invented answer is none
    # a record of an old run names no answer type: a yes/no answer is still capitalised, any other in the form
    assert render(result({**base, "answer": "yes"}), "blindtest") == "Yes"
    assert render(result({**base, "answer": "no"}), "blindtest") == "No"
    assert render(result({**base, "answer": "2"}), "blindtest") == "{2}"


def test_blindtest_run_scores_100_percent_under_every_scorer_and_report_names_it(tmp_path, capsys):
    """`illusion-agent score RUN --scorer NAME --json` re-scores a finished run and prints the figures as JSON on
    stdout; without --json the summary line names the scorer."""
    out = tmp_path / "run"
    assert illusion_agent(["run", "--dataset", str(write_blindtest_hf(tmp_path / "valid.parquet")), "--out",
                           str(out), "--images-root", str(tmp_path / "img"), *SCRIPTED]) == 0
    printed = capsys.readouterr().out
    assert "scorer official" in printed and "score " + str(out) + " --scorer lmms-eval|vlmevalkit" in printed
    for scorer, metric in (("official", "mean over tasks"), ("lmms-eval", "task_mean"),
                           ("vlmevalkit", "mean over tasks")):
        assert illusion_agent(["score", str(out), "--scorer", scorer, "--json"]) == 0
        figures = json.loads(capsys.readouterr().out)  # stdout holds the JSON alone
        assert figures["scorer"] == scorer and figures["metric"][metric] == 1.0, figures
        assert figures["counts"] == {"records": 18, "scored": 18, "failed": 0, "unlabelled": 0}
        assert all(g["ci95"][0] > 0.3 and g["ci95"][1] == pytest.approx(1.0) for g in figures["groups"])
    assert len(figures["groups"]) == 9
    assert illusion_agent(["score", str(out), "--scorer", "vlmevalkit"]) == 0
    assert "scorer vlmevalkit" in capsys.readouterr().out
    assert illusion_agent(["report", str(out), "--scorer", "lmms-eval"]) == 0
    assert "Scorer <b>lmms-eval</b>" in (out / "report" / "index.html").read_text()
    assert len(written(out)) == 18  # nothing was rerun


def test_a_scorer_the_benchmark_lacks_is_refused_naming_the_ones_it_has(tmp_path):
    out = tmp_path / "run"
    illusion_agent(["run", "--dataset", str(write_blindtest_hf(tmp_path / "v.parquet", 1)), "--out", str(out),
                    "--images-root", str(tmp_path / "img"), *SCRIPTED, "--limit", "1"])
    (out / "run.json").write_text(json.dumps({**json.loads((out / "run.json").read_text()), "format": "tet"}))
    with pytest.raises(SystemExit, match="--scorer: tet offers official; got 'vlmevalkit'"):
        illusion_agent(["score", str(out), "--scorer", "vlmevalkit"])


# ---- HallusionBench


def hb(i: int, reply: str | None, gold: str, figure: str = "1", category: str = "VD", question: str = "0",
       sub: str = "illusion") -> dict:
    keys = {"category": category, "subcategory": sub, "visual_input": "0" if figure == "0" and category == "VS"
            else "1", "set_id": str(i // 2), "figure_id": figure, "question_id": question}
    return {"id": f"{category}_{sub}_{i}_{figure}_{question}", "label": gold, "agent": "main",
            "answer": "x" if reply is not None else None, "reply": reply, "keys": keys}


def test_vlmevalkit_yes_no_reads_words_after_process_punctuation():
    # YOrN_Extraction: yes and not no -> Yes; both or neither -> Unknown
    assert vlmeval_yes_no("Yes, the lines are equal.") == "Yes"
    assert vlmeval_yes_no("No.") == "No"
    assert vlmeval_yes_no("yes/no") == "Unknown"  # '/' unspaced becomes a space: both words
    assert vlmeval_yes_no("Yes-ish") == "Yes"  # '-' unspaced becomes a space: the words are "yes", "ish"
    assert vlmeval_yes_no("I cannot say") == "Unknown"
    # a digit comma anywhere ("3,5") makes process_punctuation drop every mark instead of spacing it
    assert vlmeval_yes_no("Yes, both are 3,5 cm; no-one could tell them apart.") == "Yes"  # "noone"
    assert vlmeval_yes_no("Yes, both are 3.5 cm; no-one could tell them apart.") == "Unknown"  # "no", "one"
    # a mark with a space on either side anywhere is dropped everywhere: "no-one" stays one word
    assert vlmeval_yes_no("Yes no-one agrees.") == "Unknown"
    assert vlmeval_yes_no("Yes- no-one agrees.") == vlmeval_yes_no("Yes -no-one agrees.") == "Yes"
    # `re.sub(periodStrip, "", text, re.UNICODE)` passes 32 as the count: a 33rd period stays, "yes." is no word
    assert vlmeval_yes_no("Hmm" + "." * 31 + " yes.") == "Yes"
    assert vlmeval_yes_no("Hmm" + "." * 32 + " yes.") == "Unknown"


def test_hallusionbench_scorers_differ_on_the_same_replies():
    records = [hb(0, "Yes, they are.", "yes"), hb(1, "Yes and no.", "no", figure="0"),
               hb(2, "They are equal, no difference.", "no"), hb(3, None, "yes", figure="0", category="VS"),
               hb(4, "I cannot tell", "yes", figure="0", category="VS", question="1")]
    official, _ = score("hallusionbench", records, "official")
    lmms, _ = score("hallusionbench", records, "lmms-eval")
    vlmeval, _ = score("hallusionbench", records, "vlmevalkit")
    # official: "Yes and no." reads yes (wrong); the two unclear VS-without-figure questions count as right
    assert official["aAcc"] == pytest.approx(4 / 5)
    # lmms-eval hallusion_bench_image: the image split only, the three VD questions
    assert lmms["aAcc"] == pytest.approx(2 / 3)
    # VLMEvalKit: "Yes and no." is Unknown (wrong), image questions only
    assert vlmeval["aAcc"] == pytest.approx(2 / 3)


# ---- BLINK


@pytest.mark.parametrize("reply, letters, expected, rule", [
    ("(B)", 2, "(B)", "token"),  # analyze_answer: a reply that is an option
    ("B", 2, "(B)", "token"),
    ("The answer is (A) because (A) is nearer.", 2, "(A)", "token"),  # one bracketed option among the words
    ("(A) looks right\n\nbut (B) is it", 2, "(B)", "token"),  # two options; the last paragraph holds one
    ("<s> A", 4, "(A)", "token after stray tokens"),
    ("Point B is closer to the camera.", 2, "(B)", "named letter, first sentence"),
    ("The correct answer is C.", 4, "(C)", "stated answer"),
    ("A is closer to the camera.", 2, "(A)", "leading letter"),
    ("I'm sorry, I cannot help with that.", 2, None, "refusal"),
    ("The image shows a dog.", 2, None, "no option"),
])
def test_blink_match_reads_what_the_saved_outputs_hold(reply, letters, expected, rule):
    assert blink_match.match(reply, letters=letters) == blink_match.Match(expected, rule)


def test_blink_match_reads_option_texts():
    choices = ["the second image", "the third image"]
    assert blink_match.match("The third image is most similar to the first one.", choices).prediction == "(B)"
    assert blink_match.match("Yes, the cat is on the mat.", ["yes", "no"]).prediction == "(A)"
    assert blink_match.match("No, it is not.", ["yes", "no"]).prediction == "(B)"


def blink_record(task: str, gold: str, reply: str, i: int) -> dict:
    return {"id": f"val_{task}_{i}", "label": gold, "category": task, "agent": "main", "answer": "x",
            "reply": reply, "choices": ["Point A", "Point B"]}


def test_blink_official_and_lmms_eval_read_unbracketed_letters_differently():
    records = [blink_record("Relative_Depth", "B", "Point B is closer to the camera.", 0),
               blink_record("Relative_Depth", "A", "(A)", 1), blink_record("Jigsaw", "A", "A.", 2)]
    official, groups = score("blink", records, "official")
    assert official["mean over subtasks"] == pytest.approx((1.0 + 1.0) / 2)
    # _extract_answer_letter (0.7.3): at last the letter the reply starts with, among the item's options: "Point B"
    # reads as P where any letter counts, and as nothing among A and B
    assert lmms_blink_letter("Point B is closer") == "P" and lmms_blink_letter(" (b) x") == "B"
    assert lmms_blink_letter("Point B is closer", 2) == "" and lmms_blink_letter("The answer is (B).", 2) == "B"
    lmms, _ = score("blink", records, "lmms-eval")
    assert lmms["blink_acc"] == pytest.approx((0.5 + 1.0) / 2)


# ---- IllusionVQA and V*


def mc(category: str, gold: str, reply: str, i: int) -> dict:
    return {"id": str(i), "label": gold, "category": category, "agent": "main", "answer": "x", "reply": reply,
            "choices": ["a", "b", "c", "d"]}


def test_illusionvqa_official_is_the_first_character_and_the_micro_total():
    records = [mc("impossible object", "B", "B", 0), mc("impossible object", "B", "(B)", 1),
               mc("counting", "A", "A. four", 2), mc("occlusion", "C", "c", 3), mc("color", "D", "D", 4)]
    official, groups = score("illusionvqa", records, "official")
    # generic_eval.ipynb: item[MODEL_ANSWER_KEY][0] == correct_option_letter; counting/occlusion... are Misc
    assert official == pytest.approx({"accuracy": 3 / 5, "mean over categories": (0.5 + 1.0 + 0.5) / 3})
    assert list(official)[0] == "accuracy"
    assert groups == {"Misc": 0.5, "color": 1.0, "impossible object": 0.5}
    lmms, lmms_groups = score("illusionvqa", records, "lmms-eval")
    # MultiChoiceRegexFilter "X." -> X, else the reply; exact_match ignore_case + ignore_punctuation
    assert lmms == pytest.approx({"exact_match": 5 / 5})
    assert lmms_groups == {"color": 1.0, "counting": 1.0, "impossible object": 1.0, "occlusion": 1.0}
    # a record without the raw reply (an older run) is read from its answer, written as the prompt asks
    older = [{**mc("color", "D", "", 5), "reply": None, "answer": "D"}]
    assert score("illusionvqa", older, "official")[0]["accuracy"] == 1.0
    assert score("illusionvqa", older, "lmms-eval")[0]["exact_match"] == 1.0


def test_vstar_headline_is_the_overall_accuracy():
    records = [mc("direct_attributes", "A", "The answer is (A).", 0), mc("direct_attributes", "B", "B", 1),
               mc("relative_position", "A", "Both are on the left, so A", 2)]
    official, groups = score("vstar", records, "official")
    assert list(official)[0] == "accuracy" and groups["direct_attributes"] == 1.0
    # extract_answer_letter: a reply starting with A-D is that letter ("Both ..." reads as B)
    assert lmms_vstar_letter("Both are on the left, so A") == "B"
    lmms, groups = score("vstar", records, "lmms-eval")
    assert lmms["vstar_overall_acc"] == pytest.approx(2 / 3) and groups["relative_position"] == 0.0


@given(st.text(max_size=200), st.integers(2, 5))
@example(text="C", letters=2)
def test_blink_match_never_raises_and_reads_its_own_prediction_back(text, letters):
    found = blink_match.match(text, letters=letters)
    # the official token rule passes a reply that is exactly a letter through even past the options (BLINK's
    # analyze_answer): "C" to a two-option question reads "(C)", which no gold answer equals
    exact = {*"ABCDE", *blink_match.BRACKETED}
    passed_through = text in exact or blink_match.STRAY.sub("", text).strip() in exact
    allowed = blink_match.BRACKETED if passed_through else blink_match.BRACKETED[:letters]
    assert found.prediction is None or found.prediction in allowed
    if found.prediction is not None:
        assert blink_match.match(found.prediction, letters=letters).prediction == found.prediction


def test_saved_replies_written_as_result_lines_are_scored_and_each_says_which_rule_read_it(tmp_path):
    """Another pipeline's raw outputs (BLINK eval/saved_outputs: idx, answer, full_prediction) written as
    results.jsonl lines with `reply` are re-scored without a model; the JSON names each item's rule."""
    out = tmp_path / "imported"
    out.mkdir()
    saved = [("val_Relative_Depth_1", "(B)", "Point B is closer to the camera."),
             ("val_Relative_Depth_2", "(A)", "<s> A"), ("val_Jigsaw_1", "(A)", "I'm sorry, I cannot tell.")]
    lines = [{"id": idx, "label": gold.strip("()"), "category": idx[4:].rsplit("_", 1)[0], "reply": text,
              "answer": text, "agent": "imported", "choices": ["first", "second"]} for idx, gold, text in saved]
    (out / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (out / "run.json").write_text(json.dumps({"format": "blink"}))
    assert illusion_agent(["score", str(out), "--output", str(tmp_path / "blink.json")]) == 0
    figures = json.loads((tmp_path / "blink.json").read_text())
    assert figures["metric"]["mean over subtasks"] == pytest.approx((1.0 + 0.0) / 2)
    assert figures["decided_by"]["items"] == {"val_Relative_Depth_1": "named letter, first sentence",
                                              "val_Relative_Depth_2": "token after stray tokens",
                                              "val_Jigsaw_1": "refusal"}
    assert figures["scorers"] == ["official", "lmms-eval", "vlmevalkit"]


def test_a_judge_backend_matches_only_the_replies_no_rule_reads_and_is_named_per_item(tmp_path):
    """The official pipeline's gpt-3.5 matcher (eval/multiple_choice.py) as an opt-in fallback through any
    backend: here the function backend, whose judge always names (B)."""
    import scripted_answers

    out = tmp_path / "imported"
    out.mkdir()
    saved = [("val_Relative_Depth_1", "B", "The one where the child sits, nearer to us."),
             ("val_Relative_Depth_2", "A", "Point A is closer."), ("val_Jigsaw_1", "A", "Neither looks right to me.")]
    lines = [{"id": idx, "label": gold, "category": idx[4:].rsplit("_", 1)[0], "reply": text, "answer": text,
              "agent": "imported", "question": "Which point is closer to the camera?",
              "choices": ["Point A", "Point B"]} for idx, gold, text in saved]
    (out / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (out / "run.json").write_text(json.dumps({"format": "blink"}))
    scripted_answers.JUDGED.clear()
    assert illusion_agent(["score", str(out), "--output", str(tmp_path / "j.json"), "--judge-backend", "function",
                           "--judge-model", "scripted_answers:judge_says_b"]) == 0
    figures = json.loads((tmp_path / "j.json").read_text())
    assert figures["decided_by"]["items"] == {"val_Relative_Depth_1": "judge scripted_answers:judge_says_b",
                                              "val_Relative_Depth_2": "named letter, first sentence",
                                              "val_Jigsaw_1": "judge scripted_answers:judge_says_b"}
    assert len(scripted_answers.JUDGED) == 2 and "(B) Point B" in scripted_answers.JUDGED[0]
    assert figures["groups"] == [{"name": "Jigsaw", "accuracy": 0.0, "samples": 1, "right": 0,
                                  "ci95": figures["groups"][0]["ci95"]},
                                 {"name": "Relative_Depth", "accuracy": 1.0, "samples": 2, "right": 2,
                                  "ci95": figures["groups"][1]["ci95"]}]
    with pytest.raises(SystemExit, match="--judge-backend: blink lmms-eval has no model matcher; these do: blink "
                       "official, blink vlmevalkit, hallusionbench official, hallusionbench lmms-eval, "
                       "hallusionbench vlmevalkit, vstar vlmevalkit"):
        illusion_agent(["score", str(out), "--scorer", "lmms-eval", "--judge-backend", "function",
                        "--judge-model", "scripted_answers:judge_says_b"])


def test_a_failed_item_is_decided_by_no_answer_and_formats_without_rules_decide_nothing():
    from trompe_agents.datasets.scorers import decided_by

    answered = {"id": "a", "label": "B", "agent": "main", "answer": "B", "answer_type": "choice:2",
                "choices": ["first", "second"], "category": "Jigsaw"}
    failed = {"id": "f", "label": "A", "answer": None, "error_kind": "timeout", "choices": ["first", "second"]}
    unlabelled = {**answered, "id": "u", "label": None}
    assert decided_by("blink", results([answered, failed, unlabelled])) == {"a": "token", "f": "no answer"}
    assert decided_by(None, results([answered])) == decided_by("jsonl", results([answered])) == {}


def test_an_item_without_a_category_is_counted_in_the_group_named_dash():
    records = [{"id": "1", "label": "A", "agent": "main", "answer": "A", "answer_type": "choice:2",
                "choices": ["x", "y"], "category": None},
               {"id": "2", "label": "B", "agent": "main", "answer": "A", "answer_type": "choice:2",
                "choices": ["x", "y"], "category": "Jigsaw"}]
    _, groups = score("blink", records, "official")
    assert groups == {"-": 1.0, "Jigsaw": 0.0}


@pytest.mark.parametrize("fmt", ["blindtest", "blink", "hallusionbench", "illusionvqa", "vstar"])
def test_every_harness_scores_a_run_with_no_labelled_item_as_zero_not_a_division_by_zero(fmt):
    from trompe_agents.datasets import scorers

    for name in scorers.scorers_for(fmt):
        found = scorers.score(fmt, [], name)
        assert found.groups == [] and set(found.headline.values()) == {0.0}, (fmt, name, found.headline)


def test_vstar_official_is_accuracy_over_items_and_the_mean_over_categories_by_hand():
    """vstar_bench_eval.py: accuracy per question type; trompe reports the mean over all items and over types."""
    from trompe_agents.datasets import scorers

    records = [mc("direct_attributes", "A", "(A)", 0), mc("direct_attributes", "B", "The answer is C.", 1),
               mc("direct_attributes", "C", "C", 2), mc("relative_position", "D", "D", 3)]
    found = scorers.score("vstar", results(records), "official")
    assert (found.scorer, found.rule) == ("official", "V* vstar_bench_eval.py: accuracy over all items")
    assert found.headline == {"accuracy": pytest.approx(3 / 4), "mean over categories": pytest.approx((2 / 3 + 1) / 2)}
    assert found.groups == [("direct_attributes", pytest.approx(2 / 3), 3), ("relative_position", 1.0, 1)]


def test_lmms_eval_vstar_reads_an_upper_cased_reply_and_a_lone_letter_inside_a_word():
    """extract_answer_letter: the reply is upper-cased first; failing every pattern, a single A-D letter wins."""
    assert lmms_vstar_letter("b") == "B"
    assert lmms_vstar_letter("option-c") == "C"  # no pattern: "-" is neither space nor colon; one letter C
    assert lmms_vstar_letter("I cannot tell") is None  # two letters (C, A) and no pattern: none, not "I"


def test_blink_writes_only_options_in_brackets():
    base = {"agent": "main", "id": "x"}
    assert render(result({**base, "answer": "2", "answer_type": "integer"}), "blink") == "2"


RULES = [  # what `illusion-agent score --json` writes as each scorer's `rule`, beside its `scorer` name
    ("blindtest", "official", "VLMs Are Blind, Table 1: accuracy per task (8 tasks), mean over tasks"),
    ("blindtest", "lmms-eval", "lmms-eval 0.7.3 vlmsareblind utils.py: task_mean over tasks"),
    ("blindtest", "vlmevalkit", "VLMEvalKit VLMBlind.evaluate: accuracy per task (9 tasks)"),
    ("blink", "official", "BLINK eval/evaluate.py: accuracy per subtask, mean over subtasks"),
    ("blink", "lmms-eval", "lmms-eval 0.7.3 blink: blink_acc, mean over subtasks"),
    ("blink", "vlmevalkit", "VLMEvalKit BLINK (ImageMCQDataset, report_acc): Overall over items"),
    ("hallusionbench", "official", "tianyi-lab/HallusionBench utils.py (aAcc, qAcc, fAcc)"),
    ("hallusionbench", "lmms-eval", "lmms-eval hallusion_bench_image: official rules on the image split"),
    ("hallusionbench", "vlmevalkit", "VLMEvalKit Hallusion_rating (exact matching): aAcc, fAcc, qAcc"),
    ("illusionvqa", "official", "IllusionVQA generic_eval.ipynb: accuracy over all items"),
    ("illusionvqa", "lmms-eval", "lmms-eval illusionvqa: exact_match over items"),
    ("vstar", "official", "V* vstar_bench_eval.py: accuracy over all items"),
    ("vstar", "lmms-eval", "lmms-eval vstar_bench: overall accuracy"),
    ("vstar", "vlmevalkit", "VLMEvalKit VStarBench (ImageMCQDataset, report_acc): Overall over items"),
]


@pytest.mark.parametrize("fmt, name, rule", RULES)
def test_each_scorer_names_itself_and_the_harness_rule_it_follows(fmt, name, rule):
    from trompe_agents.datasets import scorers

    answered = {"id": "1", "label": "B", "agent": "main", "answer": "B", "answer_type": "choice:4",
                "choices": ["a", "b", "c", "d"], "category": "direct_attributes"}
    found = scorers.score(fmt, results([answered] if fmt == "vstar" else []), name)
    assert (found.scorer, found.rule) == (name, rule)
    if fmt == "vstar":  # the agent's answer, no raw reply: read as written ("B"), right
        assert found.groups == [("direct_attributes", 1.0, 1)]


def test_lmms_eval_blink_reads_the_letter_alone_only_on_the_first_line():
    """_extract_answer_letter: the first *line* of at most four characters, not the first word."""
    assert lmms_blink_letter("A closer look shows (B).", 4) == "B"
    assert lmms_blink_letter("A\nThe closer one.", 4) == "A"


def test_the_blink_judge_s_verdict_beyond_the_item_s_options_reads_as_no_option():
    from trompe_agents.datasets.benchmarks import benchmarks

    judge = benchmarks()["blink"].judges["official"]
    assert judge.verdict("(C)", result({"choices": ["x", "y"]})) == "(Z)"
    assert judge.verdict("(B)", result({"choices": ["x", "y"]})) == "(B)"


@pytest.mark.parametrize("reply, letter", [
    ("B\nNot (C), as it looked.\nSure.", "B"),  # the first line alone, not all but the last
    ("(B).\nThe answer is C.", "B"),  # a first line of four characters is read...
    ("(B).,\nThe answer is C.", "C"),  # ...one of five is not: the stated answer decides
    ("b\nThe answer is (C).", "B"),  # the first line's letter in any case
    ("I think the answer is C", "C"),  # "answer is X" with no bracketed letter anywhere
    ("So the answer is c", "C"),
    ("I pick (C) here", "C"),  # no stated answer: the last "(X)"
    ("E\nActually (B)", "B"),  # E is no option of a four-option item
])
def test_lmms_eval_blink_letter_rules_on_each_side(reply, letter):
    """lmms-eval 0.7.3 blink/utils.py `_extract_answer_letter`, in its order, on a four-option item."""
    assert lmms_blink_letter(reply, 4) == letter
    record = {"id": "1", "label": letter, "agent": "main", "answer": "x", "reply": reply,
              "choices": ["w", "x", "y", "z"], "category": "Jigsaw"}
    assert score("blink", [record], "lmms-eval")[1] == {"Jigsaw": 1.0}


def test_blink_official_reads_an_option_by_its_text_among_the_item_s_choices():
    record = {"id": "1", "label": "B", "agent": "main", "answer": "x", "reply": "The second one.",
              "choices": ["first", "second"], "category": "Jigsaw"}
    assert score("blink", [record], "official")[0] == {"mean over subtasks": 1.0, "accuracy": 1.0}
