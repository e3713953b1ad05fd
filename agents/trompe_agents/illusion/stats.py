"""Rates with their uncertainty, and the positive-detection bias the illusion paper reports."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

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


def has_answer(record: dict[str, Any]) -> bool:
    """Whether a model answered the sample (records of older runs may hold an invented 'default')."""
    return record.get("answer") is not None and record.get("agent") not in (None, "default")


def answered(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records a model answered."""
    return [r for r in records if has_answer(r)]


def illusion_consistent(record: dict[str, Any]) -> bool | None:
    """Whether the answer asserts the illusory effect, whatever the question's polarity: on a genuine illusion
    (no real effect) that is a wrong answer, on a counterfactual (the effect drawn for real) a right one.
    None without a label, an answer or probe metadata."""
    if record.get("counterfactual") is None or record.get("correct") is None:
        return None
    return bool(record["correct"]) if record["counterfactual"] else not record["correct"]


def summary(records: Iterable[dict[str, Any]]) -> str:
    """One line: who answered, what failed and why, accuracy over answered samples with its interval, and the
    accuracy counting failures as wrong beside it."""
    records = list(records)
    done = answered(records)
    failed = [r for r in records if not has_answer(r)]
    agents = Counter(r.get("agent") for r in done)
    kinds = Counter(r.get("error_kind") or "no_answer" for r in failed)
    text = (f"{len(records)} results: answered {len(done)} (main {agents['main']}, rescue {agents['rescue']}), "
            f"failed {len(failed)}")
    if kinds:
        text += " (" + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + ")"
    scored = [r for r in done if r.get("correct") is not None]
    if scored:
        right = sum(bool(r["correct"]) for r in scored)
        labelled_failures = sum(r.get("label") is not None for r in failed)
        text += (f"; accuracy {rate(right, len(scored))} over {len(scored)} answered, "
                 f"{rate(right, len(scored) + labelled_failures)} counting failures as wrong")
    return text
