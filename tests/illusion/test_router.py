"""The regex router sends realistic challenge questions to the category whose strategy fits them."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.illusion.cli import main
from trompe_agents.illusion.router import TASK_TOOLS, categories, route, scores, tools_of
from trompe_agents.illusion.router_report import evaluate, load_questions

TASK1 = [
    ("Are the two orange circles in the centre the same size?", "size comparison"),
    ("Is the left central circle larger than the right central circle?", "size comparison"),
    ("Do the two inner discs have equal diameter?", "size comparison"),
    ("Is the white square bigger than the black square?", "size comparison"),
    ("Are the two grey squares the same colour?", "colour comparison"),
    ("Is the small square on the left darker than the one on the right?", "colour comparison"),
    ("Do the two circles have the same brightness?", "colour comparison"),
    ("Are the grey bars in White's illusion the same shade?", "colour comparison"),
    ("Are the two horizontal lines the same length?", "line length"),
    ("Is the upper line longer than the lower line?", "line length"),
    ("Is the distance from A to B equal to the distance from B to C?", "line length"),
    ("Is the top segment shorter than the bottom segment?", "line length"),
    ("Are the two red lines straight?", "line straightness"),
    ("Do the horizontal lines bend outward near the centre?", "line straightness"),
    ("Are the sides of the square curved?", "line straightness"),
    ("Are the two diagonal segments aligned?", "line alignment"),
    ("Do the two parts of the diagonal line lie on the same straight line?", "line alignment"),
    ("Is the line on the right a continuation of the line on the left?", "line alignment"),
    ("Are the long vertical lines parallel to each other?", "line parallelism"),
    ("Do the rows of tiles converge towards the right?", "line parallelism"),
    ("Is there a visible boundary line between each pair of adjacent bands?", "boundary detection"),
    ("Is each vertical band uniform in colour, with no edge between them?", "boundary detection"),
    ("Is there a border between the two regions in the middle of the image?", "boundary detection"),
]

TASK2 = [
    ("How many legs does the elephant have?", "counting"),
    ("Count the number of black dots at the intersections.", "counting"),
    ("What number is hidden in this image?", "hidden content"),
    ("Which digit can you see in the dotted plate?", "hidden content"),
    ("Which tile is the odd one out?", "odd one out"),
    ("Where is the circle that is different from the others?", "odd one out"),
    ("Are the two squares A and B the same colour?", "colour comparison"),
    ("Is the picture actually moving or rotating?", "motion illusion"),
    ("Could this object exist in three-dimensional space, or is it an impossible figure?", "impossible figure"),
    ("Is the cube facing up-left or down-right?", "3-d interpretation"),
    ("Are the dimples concave or convex?", "3-d interpretation"),
    ("Are the long black lines parallel?", "parallel lines"),
    ("Is the tower on the left tilted more than the one on the right?", "alignment and slant"),
    ("Which of the two lines is longer?", "size and length"),
    ("Is the woman really holding up the tower, or is it forced perspective?", "forced perspective"),
    ("Is the cat in the picture real or a painting?", "entity realism"),
    ("What is supporting the floating rock?", "spatial relation and support"),
    ("Is it physically plausible for the chair to balance like this?", "physical plausibility"),
    ("Is the face in the image symmetric?", "symmetry"),
    ("Is the hole in the street real, or painted on a flat surface?", "real vs painted holes"),
]


@pytest.mark.parametrize("question, expected", TASK1)
def test_task1_questions_route_to_their_category(question, expected):
    assert route(question, 1).category == expected


@pytest.mark.parametrize("question, expected", TASK2)
def test_task2_questions_route_to_their_category(question, expected):
    assert route(question, 2).category == expected


def test_every_category_is_covered_by_the_table():
    assert {c for _, c in TASK1} == set(categories(1))
    assert {c for _, c in TASK2} == set(categories(2))
    assert len(categories(1)) == 7 and len(categories(2)) == 16


def test_unknown_question_falls_back_to_general_with_tools():
    r = route("What do you think of this picture?", 2)
    assert r.category == "general" and r.tools and "general strategy" in r.hint()


def test_task1_routes_never_suggest_analysis_tools():
    analysis = {"overlay_grid", "extract_channel", "sample_color", "isolate_color", "blur"}
    for question, _ in TASK1 + TASK2:
        assert not analysis & set(route(question, 1).tools)


def test_bad_task_is_named():
    with pytest.raises(ValueError, match="task must be 1"):
        route("Is it?", 3)


@given(st.text(max_size=200), st.sampled_from([1, 2]))
def test_router_is_total_and_deterministic(question, task):
    a, b = route(question, task), route(question, task)
    assert a == b and (a.category == "general" or a.category in categories(task))


def test_generated_probe_questions_route_to_their_family_category(tmp_path):
    """Every phrasing the probe generators use should reach the strategy for its category."""
    from trompe_agents.probes import generate

    expected = {"size": "size comparison", "colour": "colour comparison", "line length": "line length",
                "straightness": "line straightness", "alignment": "line alignment",
                "parallelism": "line parallelism", "boundary": "boundary detection"}
    samples = generate("illusions", n=340, seed=1, size=64, out=tmp_path, progress=False)
    questions = {(s.question, s.category) for s in samples}
    wrong = [(q, c, route(q, 1).category) for q, c in questions if route(q, 1).category != expected[c]]
    assert len(questions) > 100 and not wrong, wrong[:5]


# The paraphrase set: questions worded as a benchmark author or a user would ask them, with the category whose
# strategy fits. Before the router was tuned on it, 295 of the first 313 were routed right (94.2%); a later
# held-out batch of 33 scored 26 (79%) and was then added. Keep it growing with real wordings that fail.
PARAPHRASES = Path(__file__).parent / "router_questions.jsonl"


def test_paraphrase_set_covers_every_category_of_both_tasks():
    rows = load_questions(PARAPHRASES)
    per_category = Counter((r["task"], r["category"]) for r in rows)
    assert len(rows) >= 300
    assert set(per_category) == {(t, c) for t in (1, 2) for c in categories(t)}
    assert min(per_category.values()) >= 14
    assert len({r["question"] for r in rows}) == len(rows)  # no question counted twice


def test_router_accuracy_on_the_paraphrase_set_is_at_least_95_percent_in_every_category():
    report = evaluate(load_questions(PARAPHRASES))
    assert report.accuracy >= 0.95, report.table()
    low = {key: report.category_accuracy(*key) for key in report.total if report.category_accuracy(*key) < 0.95}
    assert not low, report.table()  # so no category is unreachable by realistic wording either


def test_cli_reports_accuracy_per_category(capsys):
    assert main(["route", "--questions", str(PARAPHRASES), "--min-accuracy", "0.95"]) == 0
    out = capsys.readouterr().out
    for task in (1, 2):
        for category in categories(task):
            assert re.search(rf"^{task}\s+{re.escape(category)}\s+\d+\s+\d+\s+\d+\.\d%$", out, re.M), category
    assert re.search(r"^all\s+\d{3}\s+\d{3}\s+\d+\.\d%$", out, re.M)


def test_cli_min_accuracy_fails_the_command_and_lists_the_misses(tmp_path, capsys):
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(json.dumps({"task": 1, "category": "line length", "question": "Are the lines straight?"})
                     + "\n" + json.dumps({"task": 1, "category": "line length", "question": "Is A longer?"}) + "\n")
    assert main(["route", "--questions", str(wrong), "--min-accuracy", "0.9"]) == 1
    captured = capsys.readouterr()
    assert "miss: task 1, expected 'line length', routed 'line straightness': Are the lines straight?" in captured.out
    assert "accuracy 50.0% is below --min-accuracy 90.0%" in captured.err


def test_cli_routes_one_question_and_names_its_cues(capsys):
    question = "Is the person in the photograph actually touching the far-away landmark?"
    assert main(["route", "--task", "2", question]) == 0
    out = capsys.readouterr().out
    assert out.startswith("category: forced perspective (score ") and "cue: " in out


def test_cli_route_needs_a_question_or_a_file(tmp_path):
    with pytest.raises(SystemExit, match="illusion-agent route: give either a QUESTION or --questions FILE"):
        main(["route"])
    with pytest.raises(SystemExit, match="--questions: no such file"):
        main(["route", "--questions", str(tmp_path / "missing.jsonl")])


@pytest.mark.parametrize("line, message", [
    ("not json", "wrong.jsonl:1: expected a JSON object with task, category and question"),
    ('{"task": 1, "category": "counting", "question": "How many?"}', "category must be one of size comparison"),
])
def test_cli_names_a_bad_question_line(tmp_path, line, message):
    bad = tmp_path / "wrong.jsonl"
    bad.write_text(line + "\n")
    with pytest.raises(SystemExit, match=re.escape(message)):
        main(["route", "--questions", str(bad)])


def test_ties_go_to_the_more_specific_category_not_the_earlier_one():
    # counting (3: "how many") comes first in the prompt, but naming the devil's fork (4) is more specific.
    ranked = scores("How many prongs does the devil's fork have?", 2)
    assert [s.category.name for s in ranked[:2]] == ["impossible figure", "counting"]
    # Equal total and strongest cue: the longer matched wording ("equally bright") beats "length".
    ranked = scores("Is the grey bar equally bright along its whole length?", 1)
    assert ranked[0].total == ranked[1].total and ranked[0].category.name == "colour comparison"


def test_category_tools_stay_within_the_papers_tool_table():
    for task in (1, 2):
        for category in [*categories(task), "general"]:
            assert set(tools_of(category, task)) <= set(TASK_TOOLS[task]), (task, category)


# The DataCV 2026 test questions: every distinct question of ziplab/DDP's asset/Data/task1/test.csv (commit
# 684032b, the `prompt` column up to "Answer Instructions") and asset/Data/task2/test.json (commit b83bc92, the
# `Question` field without its "Question:" line), with how many test items ask it (`count`) and the category
# whose strategy fits it (our reading of the question; the images are not public). Before the existence and
# proper-name cues, 1333 of the 1385 items were routed to a fitting category (96.2%).
DATACV = Path(__file__).parent / "datacv_router_questions.jsonl"


def test_datacv_test_questions_are_the_whole_test_set():
    rows = load_questions(DATACV)
    assert sum(r["count"] for r in rows if r["task"] == 1) == 630
    assert sum(r["count"] for r in rows if r["task"] == 2) == 755


def test_router_fits_at_least_97_percent_of_the_datacv_test_items():
    report = evaluate(load_questions(DATACV))
    assert report.accuracy >= 0.97, report.table()


@pytest.mark.parametrize("question", [
    "Can the figure shown in the image exist in the real three-dimensional world?",
    "Could the object drawn here exist in the physical world?",
    "Would the structure in this picture be able to exist in three-dimensional space?",
    "Is it possible for the shape on the left to exist in reality?",
    "Can the staircase in the drawing be built in the real world?",
    "Could a physical model of this object be built?",
    "Does the three-dimensional object in the drawing exist as a real solid?",
])
def test_plain_worded_existence_questions_are_impossible_figures(question):
    assert route(question, 2).category == "impossible figure", scores(question, 2)[:3]


@pytest.mark.parametrize(("question", "category"), [
    # a slant word inside a landmark's name is not a slant question...
    ("Is the person touching the Leaning Tower of Pisa in the image?", "forced perspective"),
    ("Is the tourist holding up the Leaning Tower of Suurhusen?", "forced perspective"),
    ("Is the girl pushing the Crooked House with one finger?", "forced perspective"),
    ("Is the man touching the Tilted Arc in the photo?", "forced perspective"),
    ("Is the child pinching the top of the Leaning Temple of Huma?", "forced perspective"),
    # ...while a real slant question about a named place still is
    ("Is the Leaning Tower of Pisa in this photo leaning more than usual?", "alignment and slant"),
    ("Is the wall of the Crooked House tilted to the left?", "alignment and slant"),
    ("Leaning lines: are the tiles tilted?", "alignment and slant"),
])
def test_a_slant_word_counts_only_where_it_describes_the_picture(question, category):
    assert route(question, 2).category == category, scores(question, 2)[:3]


@pytest.mark.parametrize("count", [0, -1, 1.5, "2", True])
def test_a_bad_count_is_named_with_its_line(tmp_path, count):
    bad = tmp_path / "counts.jsonl"
    bad.write_text(json.dumps({"task": 1, "category": "line length", "question": "Is A longer?", "count": count})
                   + "\n")
    with pytest.raises(ValueError, match=r"counts.jsonl:1: .*count must be a whole number >= 1"):
        load_questions(bad)


def test_cli_counts_each_question_as_often_as_the_test_set_asks_it(tmp_path, capsys):
    rows = tmp_path / "counted.jsonl"
    rows.write_text(json.dumps({"task": 1, "category": "line length", "question": "Is A longer?", "count": 3})
                    + "\n" + json.dumps({"task": 1, "category": "line length", "count": 1,
                                         "question": "Are the lines straight?"}) + "\n")
    assert main(["route", "--questions", str(rows)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^all\s+3\s+4\s+75\.0%$", out, re.M)
    assert "routed 'line straightness': Are the lines straight?\n" in out + "\n"


@pytest.mark.parametrize("question", [
    "Is the man standing in the teacup?",
    "Is the girl sitting inside the bottle?",
    "Can the child fit into the glass?",
    "Will the boy enter the woman's mouth?",
])
def test_someone_inside_a_small_near_object_is_forced_perspective(question):
    assert route(question, 2).category == "forced perspective", scores(question, 2)[:3]


def test_an_object_in_a_container_is_not_forced_perspective():
    assert route("Is the apple in the bowl real?", 2).category != "forced perspective"
