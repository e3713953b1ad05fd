"""Wilson intervals and the illusion-consistency measure behind every accuracy the reports print."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handstats import mcnemar_p
from runlines import results
from trompe_agents.illusion.stats import answered, illusion_consistent, mcnemar_exact, rate, summary, wilson


@given(st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_interval_holds_the_observed_rate_and_stays_in_zero_one(case):
    k, n = case
    low, high = wilson(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0
    assert (low == 0.0) == (k == 0) and (high == 1.0) == (k == n)


@given(st.integers(1, 500))
def test_more_samples_give_a_narrower_interval_at_the_same_rate(n):
    low, high = wilson(n, 2 * n)
    low4, high4 = wilson(4 * n, 8 * n)
    assert high4 - low4 < high - low


def test_known_values_and_bad_counts():
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)  # the textbook 95% interval for 5/10
    assert wilson(0, 0) == (0.0, 1.0)  # nothing observed: the whole range
    assert rate(0, 0) == "–" and rate(1, 4).startswith("25.0% [")
    with pytest.raises(ValueError, match="within 0..3"):
        wilson(4, 3)


def test_illusion_consistency_does_not_depend_on_question_polarity():
    def consistent(counterfactual, correct, answered=True):
        line = {"counterfactual": counterfactual, "correct": correct, "label": "yes"}
        return illusion_consistent(results([{**line, "answer": "yes", "agent": "main"} if answered else line])[0])

    assert consistent(False, False) is True and consistent(True, True) is True  # fooled, and reads the real effect
    assert consistent(False, True) is False
    assert consistent(True, None, answered=False) is None  # a failure is not counted
    assert consistent(True, True, answered=False) is None  # nor an old run's invented answer marked right


def test_summary_counts_failures_and_puts_both_accuracies_side_by_side():
    rows = ([{"answer": "yes", "agent": "main", "label": "yes", "correct": True}] * 3
            + [{"answer": "no", "agent": "rescue", "label": "yes", "correct": False}]
            + [{"answer": None, "agent": None, "label": "no", "correct": None, "error_kind": "rate_limit"}] * 2
            + [{"answer": "no", "agent": "default", "label": "no", "correct": True}])  # an old invented answer
    line = summary(results(rows))
    assert line.startswith("7 results: answered 4 (main 3, rescue 1), failed 3 (rate_limit 2, no_answer 1)")
    assert f"accuracy {rate(3, 4)} over 4 answered, {rate(3, 7)} counting failures as wrong" in line


@pytest.mark.parametrize(("a_only", "b_only"), [(0, 0), (1, 0), (0, 1), (1, 1), (3, 3), (5, 0), (2, 7), (40, 60)])
def test_mcnemar_is_the_exact_binomial_test_and_never_above_one(a_only, b_only):
    """Against SciPy's exact binomial test (tests/handstats.py); balanced flips double a tail past 1: p = 1."""
    assert mcnemar_exact(a_only, b_only) == pytest.approx(mcnemar_p(a_only, b_only), rel=1e-12)
    assert 0.0 < mcnemar_exact(a_only, b_only) <= 1.0
    assert mcnemar_exact(1, 1) == 1.0 and mcnemar_exact(0, 0) == 1.0


@pytest.mark.parametrize(("a_only", "b_only"), [(-1, 2), (2, -1)])
def test_mcnemar_refuses_a_negative_flip_count_naming_both(a_only, b_only):
    with pytest.raises(ValueError, match=rf"^flip counts must be >= 0, got {a_only} and {b_only}$"):
        mcnemar_exact(a_only, b_only)


def test_answered_keeps_only_the_records_a_model_answered():
    rows = results([{"id": "a", "answer": "yes", "agent": "main", "label": "yes", "correct": True},
                    {"id": "b", "error_kind": "run", "label": "yes"},
                    {"id": "c", "answer": "no", "agent": "rescue", "label": "yes", "correct": False}])
    assert [r.id for r in answered(rows)] == ["a", "c"]
