"""Rates with their uncertainty, and the positive-detection bias the illusion paper reports."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from ..records import Counts, Policy, SampleResult

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson(successes: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion: sensible at 0/n and n/n and for small n, unlike p ± z·se."""
    if total <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= total:
        raise ValueError(f"successes must be within 0..{total}, got {successes}")
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends: no rounding residue at 0/n, n/n
    high = 1.0 if successes == total else min(1.0, centre + half)
    return low, high


def rate(successes: int, total: int) -> str:
    """'62.5% [30.6–86.3%]' (the 95% Wilson interval), or '–' when nothing was counted."""
    if total <= 0:
        return "–"
    low, high = wilson(successes, total)
    return f"{successes / total:.1%} [{low:.1%}–{high:.1%}]"


def answered(records: Iterable[SampleResult]) -> list[SampleResult]:
    """Records a model answered."""
    return [r for r in records if not r.failed]


def illusion_consistent(record: SampleResult) -> bool | None:
    """Whether the answer asserts the illusory effect, whatever the question's polarity: on a genuine illusion
    (no real effect) that is a wrong answer, on a counterfactual (the effect drawn for real) a right one.
    None without a label, an answer or probe metadata."""
    if record.counterfactual is None or not record.scored:
        return None
    return record.right if record.counterfactual else not record.right


def summary(records: Iterable[SampleResult]) -> str:
    """One line: who answered, what failed and why, accuracy over answered samples with its interval, and the
    accuracy counting failures as wrong beside it. The records are counted as they come, none kept."""
    agents: Counter = Counter()
    kinds: Counter = Counter()
    counts, total = Counts(), 0
    for record in records:
        total += 1
        counts.add(record)
        if record.failed:
            kinds[record.failure] += 1
        else:
            agents[record.agent] += 1
    failed = sum(kinds.values())
    text = (f"{total} results: answered {total - failed} (main {agents['main']}, rescue {agents['rescue']}), "
            f"failed {failed}")
    if kinds:
        text += " (" + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + ")"
    over, wrong = counts.accuracy(Policy.EXCLUDED), counts.accuracy(Policy.WRONG)
    if over.counted:
        text += (f"; accuracy {rate(over.right, over.counted)} over {over.counted} answered, "
                 f"{rate(wrong.right, wrong.counted)} counting failures as wrong")
    return text


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: the flips (right in one run only) as a fair coin, Binomial(a+b, 1/2).

    Exact integer sums, so it holds for thousands of flips where 0.5**n would underflow."""
    if a_only < 0 or b_only < 0:
        raise ValueError(f"flip counts must be >= 0, got {a_only} and {b_only}")
    flips = a_only + b_only
    if flips == 0:
        return 1.0
    tail = sum(math.comb(flips, k) for k in range(min(a_only, b_only) + 1))
    return min(1.0, 2 * tail / 2**flips)


def paired_difference(both: int, a_only: int, b_only: int, neither: int, z: float = Z95) -> tuple[float, float, float]:
    """B's accuracy minus A's over the same samples, with Newcombe's (1998, method 10) interval for paired
    proportions: built from each run's Wilson interval and their correlation, so it stays within [-1, 1] and
    behaves at 0 and n flips, unlike the Wald interval."""
    n = both + a_only + b_only + neither
    if n <= 0:
        raise ValueError("no paired samples to compare")
    p_a, p_b = (both + a_only) / n, (both + b_only) / n
    (low_a, high_a), (low_b, high_b) = wilson(both + a_only, n, z), wilson(both + b_only, n, z)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    phi = (both * neither - a_only * b_only) / math.sqrt(margins) if margins else 0.0
    below = math.sqrt(max(0.0, (p_b - low_b) ** 2 - 2 * phi * (p_b - low_b) * (high_a - p_a) + (high_a - p_a) ** 2))
    above = math.sqrt(max(0.0, (high_b - p_b) ** 2 - 2 * phi * (high_b - p_b) * (p_a - low_a) + (p_a - low_a) ** 2))
    diff = p_b - p_a
    return diff, max(-1.0, diff - below), min(1.0, diff + above)
