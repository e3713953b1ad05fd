"""NUCT priorities against hand-computed values, and the order in which a hand-built tree is explored."""

import math

import pytest

from trompe_agents.sevex.nuct import NUCTParams, normalise_rating, priority, select, select_recorded
from trompe_agents.sevex.tree import Experiment, SelfEval, Tree

SCALED = NUCTParams(gain_scale=0.2)  # the hand-computed values below use a 10/10 gain worth +0.2


def executed(tree, parent, reward, visits, idea="x"):
    node = tree.add(parent, idea, SelfEval(5, 5, 9))
    node.experiment = Experiment(reward, [])
    node.visits = visits
    return node


@pytest.fixture
def tree():
    """root (0.5, 3 visits) -> A (0.6, 2 visits) -> A1 (0.7, 1 visit); root -> B, C unexecuted."""
    t = Tree()
    root = executed(t, None, 0.5, 3, "root")
    a = executed(t, root.id, 0.6, 2, "A")
    executed(t, a.id, 0.7, 1, "A1")
    t.add(root.id, "B", SelfEval(gain=8, novelty=5, feasibility=9))
    t.add(root.id, "C", SelfEval(gain=4, novelty=10, feasibility=9))
    return t


def test_executed_node_uses_best_descendant_reward_minus_parent(tree):
    # (R_max_A - R_root) + 0.5 * sqrt(ln 3 / 2) = (0.7 - 0.5) + 0.5 * 0.741152 = 0.570576
    assert priority(tree, tree.nodes[1], SCALED) == pytest.approx(0.570576, abs=1e-6)


def test_unexecuted_node_uses_gain_novelty_and_saturation(tree):
    # B: 0.2 * 7/9 + 0.15 * 4/9 + 0.5 * sqrt(ln 3 / 1) = 0.155556 + 0.066667 + 0.524074 = 0.746296
    assert priority(tree, tree.nodes[3], SCALED) == pytest.approx(0.746296, abs=1e-6)
    # C: 0.2 * 3/9 + 0.15 * 9/9 + 0.524074 = 0.066667 + 0.15 + 0.524074 = 0.740741
    assert priority(tree, tree.nodes[4], SCALED) == pytest.approx(0.740741, abs=1e-6)


def test_default_gain_scale_is_the_papers_formula(tree):
    # Eq. 2 as printed: B = 7/9 + 0.15 * 4/9 + 0.5 * sqrt(ln 3 / 1) = 0.777778 + 0.066667 + 0.524074 = 1.368518
    assert NUCTParams().gain_scale == 1.0
    assert priority(tree, tree.nodes[3], NUCTParams()) == pytest.approx(1.368518, abs=1e-6)


def test_recorded_selection_lists_every_child_with_its_terms(tree):
    path, levels = select_recorded(tree, SCALED)
    assert [n.idea for n in path] == ["root", "B"] and len(levels) == 1
    level = levels[0]
    assert level["parent"] == 0 and level["chosen"] == 3
    assert [c["node"] for c in level["candidates"]] == [3, 4, 1]  # B, C, A by priority
    b = level["candidates"][0]
    assert b["priority"] == pytest.approx(0.746296, abs=1e-6)
    assert b["terms"] == {"gain_rating": 8, "gain": pytest.approx(0.155556, abs=1e-6), "novelty_rating": 5,
                          "novelty": pytest.approx(0.066667, abs=1e-6), "n_parent": 3, "executed_siblings": 1,
                          "saturation": pytest.approx(0.524074, abs=1e-6)}
    assert b["executed"] is False and b["priority"] == 0.746296  # rounded to 6 decimals for the reader
    a = level["candidates"][2]
    assert a["executed"] is True and a["priority"] == 0.570576
    assert a["terms"] == {"r_max": 0.7, "parent_reward": 0.5, "n_parent": 3, "visits": 2,
                          "exploration": pytest.approx(0.370576, abs=1e-6)}


def test_lambdas_scale_their_terms(tree):
    plain = priority(tree, tree.nodes[3], NUCTParams(lambda_novel=0, lambda_sat=0, gain_scale=0.2))
    assert plain == pytest.approx(0.2 * 7 / 9)
    no_explore = priority(tree, tree.nodes[1], NUCTParams(lambda_expl=0, gain_scale=0.2))
    assert no_explore == pytest.approx(0.2)


def test_saturation_favours_unexecuted_children_of_untried_parents(tree):
    a1 = tree.nodes[2]
    fresh = tree.add(a1.id, "A1-child", SelfEval(1, 1, 9))
    assert priority(tree, fresh, SCALED) == math.inf


def test_between_untried_ideas_the_better_rated_one_goes_first_even_if_newer():
    """Children of a parent none of whose children ran all have infinite priority: gain + novelty decide."""
    t = Tree()
    root = executed(t, None, 0.5, 1, "root")
    t.add(root.id, "older", SelfEval(gain=5, novelty=1, feasibility=9))  # 4/9 + 0.15 * 0 = 0.444
    t.add(root.id, "newer", SelfEval(gain=4, novelty=9, feasibility=9))  # 3/9 + 0.15 * 8/9 = 0.467
    path, levels = select_recorded(t, NUCTParams())
    assert [n.idea for n in path] == ["root", "newer"]
    assert [c["priority"] for c in levels[0]["candidates"]] == ["inf", "inf"]  # JSON has no infinity


def test_ratings_are_normalised_to_unit_range():
    assert [normalise_rating(r) for r in (1, 5.5, 10, 0, 12)] == [0.0, 0.5, 1.0, 0.0, 1.0]


def test_selection_order_on_hand_built_tree(tree):
    params = SCALED
    # From the root B (0.746) beats C (0.741) and A (0.571).
    assert [n.idea for n in select(tree, params)] == ["root", "B"]
    # Once B is tried and scores badly, saturation drops (2 executed siblings) and A's subtree wins:
    b = tree.nodes[3]
    b.experiment, b.visits = Experiment(0.1, []), 1
    tree.nodes[0].visits = 4
    # A: 0.2 + 0.5*sqrt(ln4/2) = 0.616; C: 0.2167 + 0.5*sqrt(ln4/2) = 0.633 -> C still first
    assert [n.idea for n in select(tree, params)][-1] == "C"
    c = tree.nodes[4]
    c.experiment, c.visits = Experiment(0.2, []), 1
    tree.nodes[0].visits = 5
    # Now every root child is executed: A (0.2 + 0.5*sqrt(ln5/2)) beats B and C (negative gains),
    # and inside A the path goes to A1, whose own children are what is left to try.
    a1_child = tree.add(2, "deep idea", SelfEval(6, 6, 9))
    assert [n.idea for n in select(tree, params)] == ["root", "A", "A1", a1_child.idea]


def test_r_max_takes_best_of_subtree(tree):
    assert tree.r_max(1) == 0.7
    assert tree.r_max(0) == 0.7
    assert tree.best().idea == "A1"
