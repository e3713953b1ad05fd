"""The pre-router sends realistic challenge questions to the category whose strategy fits them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.illusion.router import categories, route

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
