"""The positive-detection bias the illusion paper reports, as a table and as psychometric plots per probe family.

The measure is the rate of illusion-consistent answers (answers asserting the illusory effect, stats.py), genuine
vs counterfactual: a model that reads the image is consistent on counterfactuals and not on genuine illusions; a
biased one is consistent on both. Unlike the raw yes-rate it does not depend on how each question is phrased.
"""

from __future__ import annotations

from collections import defaultdict
from html import escape
from typing import Any

from .stats import illusion_consistent, rate, wilson

GENUINE, COUNTERFACTUAL = "#b3261e", "#4a7bd0"


def consistency(records: list[dict[str, Any]]) -> tuple[int, int]:
    """(illusion-consistent, counted) over the records where it is defined."""
    flags = [f for f in map(illusion_consistent, records) if f is not None]
    return sum(flags), len(flags)


def by_family(records: list[dict[str, Any]]) -> dict[str, dict[bool, list[dict[str, Any]]]]:
    """family -> counterfactual? -> records, for probe records with an answer and a label."""
    families: dict[str, dict[bool, list[dict[str, Any]]]] = defaultdict(lambda: {False: [], True: []})
    for r in records:
        if r.get("family") and illusion_consistent(r) is not None:
            families[r["family"]][bool(r["counterfactual"])].append(r)
    return dict(sorted(families.items()))


def bias_table(records: list[dict[str, Any]]) -> str:
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
    total = "".join(f"<td>{rate(*consistency([r for r in everything if bool(r['counterfactual']) == cf]))}</td>"
                    for cf in (False, True))
    return ("<table class='bias'><tr><th>family</th><th>genuine: illusion-consistent</th>"
            "<th>counterfactual: illusion-consistent</th></tr>" + "".join(rows)
            + f"<tr><th>all</th>{total}</tr></table>")


def _share(records: list[dict[str, Any]]) -> str:
    hits, total = consistency(records)
    return f"{hits / total:.6g}" if total else ""


def psychometric_svg(family: str, split: dict[bool, list[dict[str, Any]]], width: int = 320,
                     height: int = 200) -> str:
    """Illusion-consistent answer rate vs magnitude (genuine at 0), with 95% Wilson bars, as inline SVG."""
    points: list[tuple[bool, float, int, int]] = []  # counterfactual?, magnitude, hits, total
    for cf, members in split.items():
        levels: dict[float, list[dict[str, Any]]] = defaultdict(list)
        for r in members:
            levels[0.0 if not cf else float(r.get("magnitude") or 0)].append(r)
        points += [(cf, m, *consistency(levels[m])) for m in sorted(levels)]
    top = max((m for _, m, _, _ in points), default=1.0) or 1.0
    left, right, up, down = 40, 12, 12, 30

    def x(magnitude: float) -> float:
        return left + (width - left - right) * magnitude / top

    def y(share: float) -> float:
        return up + (height - up - down) * (1 - share)

    parts = [f"<svg class='psychometric' data-family='{escape(family)}' xmlns='http://www.w3.org/2000/svg' "
             f"width='{width}' height='{height}' role='img'><title>{escape(family)}: illusion-consistent answers "
             f"vs magnitude</title>",
             f"<line x1='{left}' y1='{y(0)}' x2='{width - right}' y2='{y(0)}' stroke='#999'/>"
             f"<line x1='{left}' y1='{y(0)}' x2='{left}' y2='{y(1)}' stroke='#999'/>"
             f"<text x='{left - 4}' y='{y(1) + 4}' text-anchor='end' font-size='10'>100%</text>"
             f"<text x='{left - 4}' y='{y(0.5) + 4}' text-anchor='end' font-size='10'>50%</text>"
             f"<text x='{left - 4}' y='{y(0) + 4}' text-anchor='end' font-size='10'>0%</text>"
             f"<text x='{(left + width - right) / 2}' y='{height - 6}' text-anchor='middle' font-size='10'>"
             f"magnitude (0: genuine illusion)</text>"]
    line = [(x(m), y(h / n)) for cf, m, h, n in points if cf and n]
    if len(line) > 1:
        parts.append("<polyline fill='none' stroke='{}' points='{}'/>".format(
            COUNTERFACTUAL, " ".join(f"{a:.1f},{b:.1f}" for a, b in line)))
    for cf, m, hits, n in points:
        if not n:
            continue
        low, high = wilson(hits, n)
        colour, kind = (COUNTERFACTUAL, "counterfactual") if cf else (GENUINE, "genuine")
        parts.append(f"<line x1='{x(m):.1f}' y1='{y(low):.1f}' x2='{x(m):.1f}' y2='{y(high):.1f}' "
                     f"stroke='{colour}' opacity='0.5'/>"
                     f"<circle class='point' data-kind='{kind}' data-magnitude='{m:g}' data-rate='{hits / n:.6g}' "
                     f"data-n='{n}' cx='{x(m):.1f}' cy='{y(hits / n):.1f}' r='4' fill='{colour}'>"
                     f"<title>{kind} {m:g}: {hits}/{n}</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


def bias_section(records: list[dict[str, Any]]) -> str:
    """The table and one psychometric plot per family."""
    families = by_family(records)
    plots = "".join(f"<figure style='display:inline-block;margin:0 12px 12px 0'>{psychometric_svg(f, split)}"
                    f"<figcaption>{escape(f)}</figcaption></figure>" for f, split in families.items())
    legend = (f"<p class='muted'>Illusion-consistent: the answer asserts the illusory effect (wrong on a genuine "
              f"illusion, right on a counterfactual that draws the effect for real), whatever the question's "
              f"polarity. <span style='color:{GENUINE}'>●</span> genuine, <span style='color:{COUNTERFACTUAL}'>●"
              f"</span> counterfactual; bars are 95% Wilson intervals. Failed samples are left out.</p>")
    return "<h3>Positive-detection bias</h3>" + legend + bias_table(records) + plots
