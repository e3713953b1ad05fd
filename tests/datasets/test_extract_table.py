"""The answer extractors against tables of realistic model replies: the committed (last, explicit) answer wins.

Replies are written in the styles VLMs answer BLINK, IllusionVQA, V*, DataCV and BlindTest prompts with:
bare letters, "(B)", "Option B", "a. ...", markdown bold, LaTeX boxes, answer tags, reasoning that weighs
several options before settling, and hedges. Each row says what a careful human grader would read.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.datasets.answers import extract, states_answer

CHOICE = [
    ("B", "B"),
    ("(B)", "B"),
    ("b", "B"),
    ("B.", "B"),
    ("Option B", "B"),
    ("option c", "C"),
    ("Answer: D", "D"),
    ("Answer: (A)", "A"),
    ("The answer is (C).", "C"),
    ("The answer is C.", "C"),
    ("The correct answer is a bit unclear, but the marked point looks nearer at (B)", "B"),
    ("The correct answer is a bit unclear ... (B)", "B"),
    ("B is closer", "B"),
    ("B is closer to the camera.", "B"),
    ("a. The left one", "A"),
    ("c) They are equal", "C"),
    ("(C) They are equal", "C"),
    ("C. They are equal in size.", "C"),
    ("**B**", "B"),
    ("**(D)**", "D"),
    ("The final answer is **B**.", "B"),
    ("\\boxed{C}", "C"),
    ("So the answer is $\\boxed{A}$.", "A"),
    ("<answer>D</answer>", "D"),
    ("<reasons>The toes look like 5.</reasons><answer>B</answer>", "B"),
    ("Comparing (A) and (B), point A lies on the far wall. The answer is (B).", "B"),
    ("(A) would put the piece upside down, so (B) fits.", "B"),
    ("Looking at the options: (A) first, (B) second. I'd go with B.", "B"),
    ("I choose C.", "C"),
    ("I will pick option D.", "D"),
    ("My choice is (A).", "A"),
    ("Final answer: E", "E"),
    ("The best option is F.", "F"),
    ("Answer: G) The floor is a painting.", "G"),
    ("The correct option is H.", "H"),
    ("A cat sits on the stairs, which are painted on a flat floor. The answer is A.", "A"),
    ("At first I thought (A), but the shadows show the object is flat. Answer: C", "C"),
    ("The answer is A. Wait, looking again at the edges, the answer is D.", "D"),
    ("Answer: B. (A) would be wrong because the lines are equal.", "B"),
    ("Between (A) and (B), the answer is A", "A"),
    ("The answer is (A). Though (B) is plausible, A fits best.", "A"),
    ("Based on the depth cues, the answer is: (B)", "B"),
    ("answer: (c)", "C"),
    ("The answer is b", "B"),
    ("Correct answer: (E)", "E"),
    ("The point labelled B is closer.\n\n(B)", "B"),
    ("Step 1: examine the jigsaw piece.\nStep 2: compare edges.\nTherefore (A).", "A"),
    ("There are 5 fingers visible, matching option B.", "B"),
    ("Reasoning: the two circles are identical.\nOption C", "C"),
    ("**Answer:** (D) Not Sure", "D"),
    ("- (A) first\n- (B) second\nI'll go with (A).", "A"),
    ("It is hard to say, but I would say B.", "B"),
    ("Going with D.", "D"),
    ("(e)", "E"),
    ("Answer: H", "H"),
    ("I cannot tell from this image.", None),
    ("None of the options fit.", None),
    ("", None),
]

YESNO = [
    ("Yes", "yes"),
    ("No", "no"),
    ("yes.", "yes"),
    ("No.", "no"),
    ("Yes, they are the same length.", "yes"),
    ("No, the left line is longer.", "no"),
    ("{Yes}", "yes"),
    ("{No}", "no"),
    ("<answer>yes</answer>", "yes"),
    ("<reasons>equal</reasons><answer>No</answer>", "no"),
    ("**Yes**", "yes"),
    ("**No.**", "no"),
    ("The answer is yes.", "yes"),
    ("Answer: No", "no"),
    ("Answer: Yes, both bands share one colour.", "yes"),
    ("The lines look different, but they are actually equal. So yes.", "yes"),
    ("They look different, but measured they are the same. Therefore, no.", "no"),
    ("Yes or no? I'd say no.", "no"),
    ("I would say yes.", "yes"),
    ("My answer is no.", "no"),
    ("At first glance, yes, they look bent. But checking with the ruler, the answer is no.", "no"),
    ("No wait, looking again the answer is yes.", "yes"),
    ("Looking at it... no.", "no"),
    ("The circles touch at one point. Thus, yes.", "yes"),
    ("Hence no.", "no"),
    ("Yes - the two squares are the same shade.", "yes"),
    ("No; the orange circles differ in size.", "no"),
    ("YES", "yes"),
    ("NO", "no"),
    ("  yes  ", "yes"),
    ("Yes! Both are straight.", "yes"),
    ("No, not at all.", "no"),
    ("The two vertical bands are of the same color. Answer: yes", "yes"),
    ("After comparing pixel values, the answer is No.", "no"),
    ("Final answer: yes", "yes"),
    ("final answer: NO", "no"),
    ("{yes}", "yes"),
    ("\\boxed{No}", "no"),
    ("I think the answer is yes, because the gap is constant.", "yes"),
    ("The red and black lines are aligned, so yes.", "yes"),
    ("The red and black lines are not aligned, so no.", "no"),
    ("Do they have straight edges? Yes.", "yes"),
    ("Is there a boundary between every region? No.", "no"),
    ("Yes.\n\nExplanation: both lines measure 120 px.", "yes"),
    ("No.\n\nExplanation: the left one is 10 px longer.", "no"),
    ("Answer: **Yes**", "yes"),
    ("answer: no", "no"),
    ("Both circles are the same size. So the answer is yes.", "yes"),
    ("Therefore yes, they are parallel.", "yes"),
    ("Thus no: the lines converge.", "no"),
    ("The distances A-B and B-C are equal: yes.", "yes"),
    ("It's an illusion; in reality no, the line is not bent.", "no"),
    ("I cannot tell.", None),
    ("Maybe.", None),
    ("Both yes and no.", None),
]

NUMBER = [
    ("3", "3"),
    ("{3}", "3"),
    ("{ 2 }", "2"),
    ("The lines intersect {2} times.", "2"),
    ("They cross at x=1 and x=4, so {2}", "2"),
    ("There are 3 intersections.", "3"),
    ("There are three nested squares.", "3"),
    ("I count 4 squares in total.", "4"),
    ("I count {5} circles.", "5"),
    ("The answer is 5 (not 6).", "5"),
    ("Answer: 7", "7"),
    ("answer: {0}", "0"),
    ("No intersections at all: {0}", "0"),
    ("The two lines never meet, so {0}.", "0"),
    ("<answer>6</answer>", "6"),
    ("<reasons>one, two, three</reasons><answer>3</answer>", "3"),
    ("**4**", "4"),
    ("The total is **9**.", "9"),
    ("\\boxed{8}", "8"),
    ("Counting them one by one: 1, 2, 3, 4, 5. So {5}.", "5"),
    ("First I thought {3}, but after recounting the answer is {4}.", "4"),
    ("There are 3 paths from A to C via the red line and... in total {1} single-colour path.", "1"),
    ("Total of 12 circles.", "12"),
    ("There is one path.", "1"),
    ("There are two paths between the stations.", "2"),
    ("Exactly 3.", "3"),
    ("I see 6 squares.", "6"),
    ("The count is 10.", "10"),
    ("{10}", "10"),
    ("{11}", "11"),
    ("The answer is {2}.", "2"),
    ("Answer: {1}", "1"),
    ("Five.", "5"),
    ("There are five circles in the logo.", "5"),
    ("I can count 7 fingers.", "7"),
    ("The image shows 2 crossings.", "2"),
    ("After tracing both functions, they intersect {1} time.", "1"),
    ("Intersections: {2}", "2"),
    ("In total, 4 nested squares.", "4"),
    ("{3} squares are nested.", "3"),
    ("The blue and red lines intersect at two points: {2}", "2"),
    ("Number of paths: {0}", "0"),
    ("It looks like {4} to me, though the inner square is small.", "4"),
    ("The olympic logo has {6} circles.", "6"),
    ("Answer: three", "3"),
    ("There are 3 intersections, not 2", "3"),
    ("The answer is 9", "9"),
    ("That makes 8.", "8"),
    ("{ 5 }", "5"),
    ("Counting carefully, there are 11 circles.", "11"),
    ("I see no intersections: {0}.", "0"),
    ("It's impossible to count.", None),
]


@pytest.mark.parametrize("reply, expected", CHOICE)
def test_multiple_choice_replies(reply, expected):
    assert extract("choice", reply) == expected
    if expected is not None:
        assert states_answer("illusionvqa", reply, expected)


@pytest.mark.parametrize("reply, expected", YESNO)
def test_yes_no_replies(reply, expected):
    assert extract("yesno", reply) == expected
    if expected is not None:
        assert states_answer("hallusionbench", reply, expected)
        assert states_answer("blindtest", reply, expected.capitalize())


@pytest.mark.parametrize("reply, expected", NUMBER)
def test_number_replies(reply, expected):
    assert extract("integer", reply) == expected
    if expected is not None:
        assert states_answer("blindtest", reply, expected)


def test_tables_hold_at_least_fifty_replies_per_answer_type():
    assert min(len(CHOICE), len(YESNO), len(NUMBER)) >= 50


@pytest.mark.parametrize("gold, reply", [("B", "(B)"), ("b", "The answer is (B)."), ("C", "Option C")])
def test_a_sample_with_options_reads_letters_as_options(gold, reply):
    """SEVEX custom tasks use `auto`: with the sample's options a gold 'B' is option B, so '(B)' scores."""
    assert states_answer("auto", reply, gold, choices=["first", "second", "third"])
    assert not states_answer("auto", "(A)", gold, choices=["first", "second", "third"])


@given(st.lists(st.sampled_from("ABCDEFGH"), max_size=4), st.sampled_from("ABCDEFGH"),
       st.sampled_from(["The answer is ({})", "Answer: {}", "Final answer: ({})", "I'd go with {}.",
                        "<answer>{}</answer>"]))
def test_the_committed_answer_wins_over_options_weighed_before_it(weighed, final, commit):
    """However many options the reply weighs first, in parentheses or as "Option X", the commitment decides."""
    reasoning = " ".join(f"Option {x} looks plausible, and ({x}) is close." for x in weighed)
    assert extract("choice", f"{reasoning} {commit.format(final)}") == final
