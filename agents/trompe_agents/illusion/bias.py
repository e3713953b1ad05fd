"""The positive-detection bias the illusion paper reports, as a table and as psychometric plots per probe family.

The measure is the rate of illusion-consistent answers (answers asserting the illusory effect, stats.py), genuine
vs counterfactual: a model that reads the image is consistent on counterfactuals and not on genuine illusions; a
biased one is consistent on both. Unlike the raw yes-rate it does not depend on how each question is phrased.
"""

from __future__ import annotations

from collections import defaultdict
from html import escape

from ..records import SampleResult
from .plots import Point, Series, xy_chart
from .stats import illusion_consistent, rate, wilson

GENUINE, COUNTERFACTUAL = "#b3261e", "#4a7bd0"


def consistency(records: list[SampleResult]) -> tuple[int, int]:
    """(illusion-consistent, counted) over the records where it is defined."""
    flags = [f for f in map(illusion_consistent, records) if f is not None]
    return sum(flags), len(flags)


def by_family(records: list[SampleResult]) -> dict[str, dict[bool, list[SampleResult]]]:
    """family -> counterfactual? -> records, for probe records with an answer and a label."""
    families: dict[str, dict[bool, list[SampleResult]]] = defaultdict(lambda: {False: [], True: []})
    for r in records:
        if r.family and illusion_consistent(r) is not None:
            families[r.family][bool(r.counterfactual)].append(r)
    return dict(sorted(families.items()))


def bias_table(records: list[SampleResult]) -> str:
    """Per family: illusion-consistent rate on genuine and on counterfactual probes, with 95% intervals."""
    families = by_family(records)
    if not families:
        return "<p class='muted'>no answered probe samples with genuine/counterfactual metadata</p>"
    rows = []
    for family, split in families.items():
        cells = "".join(f"<td data-rate='{_share(split[cf])}'>{rate(*consistency(split[cf]))} "
                        f"<span class='muted'>n={len(split[cf])}</span></td>" for cf in (False, True))
        rows.append(f"<tr data-family='{escape(family)}'><td>{escape(family)}</td>{cells}</tr>")
    everything = [r for split in families.values() for group in split.values() for r in group]
    total = "".join(f"<td>{rate(*consistency([r for r in everything if bool(r.counterfactual) == cf]))}</td>"
                    for cf in (False, True))
    return ("<table class='bias'><tr><th>family</th><th>genuine: illusion-consistent</th>"
            "<th>counterfactual: illusion-consistent</th></tr>" + "".join(rows)
            + f"<tr><th>all</th>{total}</tr></table>")


def _share(records: list[SampleResult]) -> str:
    hits, total = consistency(records)
    return f"{hits / total:.6g}" if total else ""


def psychometric_svg(family: str, split: dict[bool, list[SampleResult]]) -> str:
    """Illusion-consistent answer rate vs the effect strength drawn for real (genuine at 0), with 95% Wilson
    bars: titled axes, tick values and a legend (plots.py)."""
    series = []
    for cf, (name, colour) in ((False, ("genuine", GENUINE)), (True, ("counterfactual", COUNTERFACTUAL))):
        levels: dict[float, list[SampleResult]] = defaultdict(list)
        for r in split.get(cf, []):
            levels[0.0 if not cf else float(r.magnitude or 0)].append(r)
        points = []
        for m in sorted(levels):
            hits, n = consistency(levels[m])
            if n:
                low, high = wilson(hits, n)
                points.append(Point(m, hits / n, low, high, n, {"kind": name, "magnitude": f"{m:g}",
                                                                 "rate": f"{hits / n:.6g}", "n": str(n)}))
        series.append(Series(name, colour, points, line=cf))
    return xy_chart(series, chart_id=f"psychometric-{family}", css="psychometric",
                    extra=f"data-family='{escape(family)}' ",
                    title=f"{family}: illusion-consistent answers",
                    x_title=f"effect strength drawn ({unit_of(split)}; 0: genuine illusion)",
                    y_title="illusion-consistent answers (%)")


def unit_of(split: dict[bool, list[SampleResult]]) -> str:
    """What the family's magnitude measures, as its probes recorded it (older probe sets: 'magnitude')."""
    return next((r.magnitude_unit for rs in split.values() for r in rs if r.magnitude_unit), "magnitude")


def bias_section(records: list[SampleResult]) -> str:
    """The table and one psychometric plot per family."""
    families = by_family(records)
    plots = "".join(f"<figure style='display:inline-block;margin:0 12px 12px 0'>{psychometric_svg(f, split)}"
                    f"<figcaption>{escape(f)}</figcaption></figure>" for f, split in families.items())
    legend = (f"<p class='muted'>Illusion-consistent: the answer asserts the illusory effect (wrong on a genuine "
              f"illusion, right on a counterfactual that draws the effect for real), whatever the question's "
              f"polarity. <span style='color:{GENUINE}'>●</span> genuine, <span style='color:{COUNTERFACTUAL}'>●"
              f"</span> counterfactual; bars are 95% Wilson intervals. Failed samples are left out.</p>")
    return "<h3>Positive-detection bias</h3>" + legend + bias_table(records) + plots
