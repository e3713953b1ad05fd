"""The statistics trompe exports, computed by hand from their textbook definitions (and SciPy where it has them),
so a test checks trompe's numbers against a computation that shares no code with trompe's own `stats`."""

from __future__ import annotations

import math

from scipy.stats import binomtest


def wilson(right: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval, as SciPy computes it (binomtest(...).proportion_ci(method="wilson"))."""
    ci = binomtest(right, n).proportion_ci(confidence_level=0.95, method="wilson")
    return ci.low, ci.high


def stderr_n_minus_1(right: int, n: int) -> float | None:
    """lmms-eval's `mean_stderr` of 0/1 items: the sample standard deviation (n - 1) over sqrt(n); None below 2."""
    if n < 2:
        return None
    mean = right / n
    variance = (right * (1 - mean) ** 2 + (n - right) * mean ** 2) / (n - 1)
    return math.sqrt(variance / n)


def mcnemar_p(a_only: int, b_only: int) -> float:
    """The two-sided exact McNemar p-value: the flips as Binomial(flips, 1/2), by SciPy's exact test."""
    flips = a_only + b_only
    return 1.0 if flips == 0 else binomtest(a_only, flips, 0.5).pvalue


def newcombe(both: int, a_only: int, b_only: int, neither: int) -> tuple[float, float, float]:
    """B - A with Newcombe's (1998, Statistics in Medicine 17:873-890) method 10 interval for paired proportions,
    written from the paper's formulas: each margin's Wilson interval (l, u) and the phi correlation of the table."""
    n = both + a_only + b_only + neither
    p_a, p_b = (both + a_only) / n, (both + b_only) / n
    (l_a, u_a), (l_b, u_b) = wilson(both + a_only, n), wilson(both + b_only, n)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    phi = (both * neither - a_only * b_only) / math.sqrt(margins) if margins else 0.0
    d_low = math.sqrt((p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2)
    d_high = math.sqrt((u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2)
    return p_b - p_a, p_b - p_a - d_low, p_b - p_a + d_high
