"""SVG charts a reader can put in a paper: titled axes with units, readable tick values, a legend, 95% bars.

Each chart is one `<svg>` element with its own xmlns, so the same text is inlined in the HTML report and written as a
standalone `.svg` file (`standalone`), and drawn from that same text as a `.png` (raster.py). Data values ride on
data-* attributes, which is what the tests read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from ..runfolder import RunFolder
from .raster import svg_to_png

FONT = "font-family='Helvetica, Arial, sans-serif'"
BLUE, RED, GREY = "#4a7bd0", "#b3261e", "#888"


def tick_label(value: float) -> str:
    """0.25 stays '0.25' (a fixed one-decimal format printed it as 0.2); whole numbers lose the '.0'."""
    return f"{round(value, 10):.12g}"


def percent(value: float) -> str:
    return f"{tick_label(value * 100)}%"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round tick values (steps of 1, 2, 2.5 or 5 times a power of ten) covering low..high."""
    if high <= low:
        return [low]
    raw = (high - low) / max(1, count - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))
    first = math.floor(low / step + 1e-9) * step
    ticks, value = [], first
    while value <= high + step * 1e-6:
        ticks.append(round(value, 10))
        value += step
    return ticks


@dataclass
class Point:
    """One plotted value with its 95% interval and the count behind it."""

    x: float
    y: float
    low: float | None = None
    high: float | None = None
    n: int | None = None
    attrs: dict[str, str] = field(default_factory=dict)  # data-* attributes of the marker


@dataclass
class Series:
    name: str
    colour: str
    points: list[Point]
    line: bool = True


def _svg(chart_id: str, css: str, width: int, height: int, title: str, extra: str = "") -> str:
    return (f"<svg id='{escape(chart_id)}' class='{css}' {extra}xmlns='http://www.w3.org/2000/svg' width='{width}' "
            f"height='{height}' viewBox='0 0 {width} {height}' role='img' {FONT}><title>{escape(title)}</title>"
            f"<rect width='{width}' height='{height}' fill='white'/>")


def _axis_titles(x_title: str, y_title: str, left: float, right: float, top: float, bottom: float,
                 height: int, y_at: int = 14) -> str:
    """The x title under the ticks and the y title turned up along the left edge (at x = `y_at`)."""
    y_mid = (top + bottom) / 2
    return (f"<text class='axis-title x-title' x='{(left + right) / 2:.1f}' y='{height - 6}' text-anchor='middle' "
            f"font-size='12'>{escape(x_title)}</text>"
            f"<text class='axis-title y-title' x='{y_at}' y='{y_mid:.1f}' text-anchor='middle' font-size='12' "
            f"transform='rotate(-90 {y_at} {y_mid:.1f})'>{escape(y_title)}</text>")


def whisker(at: float, low: float, high: float, colour: str, vertical: bool, cap: float = 4) -> str:
    """A 95% interval as a reader expects it: a line from low to high with a cap across each end."""
    def line(a0: float, b0: float, a1: float, b1: float) -> str:  # a: along the interval, b: across it
        x0, y0, x1, y1 = (b0, a0, b1, a1) if vertical else (a0, b0, a1, b1)
        return f"<line x1='{x0:.1f}' y1='{y0:.1f}' x2='{x1:.1f}' y2='{y1:.1f}' stroke='{colour}' stroke-width='1.2'/>"

    return ("<g class='whisker'>" + line(low, at, high, at) + line(low, at - cap, low, at + cap)
            + line(high, at - cap, high, at + cap) + "</g>")


def title_length(text: str, size: int = 12) -> float:
    """About how long a title runs in pixels (0.6 em a character, Helvetica's average), plus a margin."""
    return 0.6 * size * len(text) + 12


def _legend(entries: Sequence[tuple[str, str]], x: float, y: float) -> str:
    parts = ["<g class='legend'>"]
    for i, (name, colour) in enumerate(entries):
        parts.append(f"<rect x='{x:.1f}' y='{y + i * 16 - 9:.1f}' width='10' height='10' fill='{colour}'/>"
                     f"<text x='{x + 14:.1f}' y='{y + i * 16:.1f}' font-size='11'>{escape(name)}</text>")
    return "".join(parts) + "</g>"


def _heading(title: str, x: float, note: str = "", note_data: dict[str, str] | None = None) -> str:
    """The chart's title drawn at the top (bold), and under it a note such as a test's result, its values on
    data-* attributes."""
    attrs = "".join(f" data-{k}='{escape(v)}'" for k, v in (note_data or {}).items())
    drawn = (f"<text class='chart-title' x='{x:.1f}' y='16' text-anchor='middle' font-size='13' "
             f"font-weight='bold'>{escape(title)}</text>")
    if note:
        drawn += (f"<text class='chart-note'{attrs} x='{x:.1f}' y='34' text-anchor='middle' "
                  f"font-size='11'>{escape(note)}</text>")
    return drawn


def xy_chart(series: Sequence[Series], *, chart_id: str, title: str, x_title: str, y_title: str,
             css: str = "chart", extra: str = "", x_ticks: Sequence[float] | None = None,
             y_format: Callable[[float], str] = percent, width: int = 420, height: int = 280) -> str:
    """Points with 95% bars on a 0-1 y axis, joined where `line`; x ticks at the data's x values unless given.
    The legend column and the width grow with the names and the x title, so no text runs off the chart."""
    legend = max(132, math.ceil(max((title_length(s.name, 11) for s in series), default=0)) + 38)
    width = max(width, math.ceil(max(title_length(x_title), title_length(title, 13))) + legend - 50)
    left, right, top, bottom = 58, width - legend, 28, height - 46  # the plot area; the legend sits on the right
    xs = sorted({p.x for s in series for p in s.points})
    ticks = list(x_ticks) if x_ticks is not None else xs or [0.0, 1.0]
    x_low, x_high = min(ticks + xs), max(ticks + xs)
    span = (x_high - x_low) or 1.0

    def x(value: float) -> float:  # 14 px in from each end, so a point at 0 is not drawn on the y axis
        return left + 14 + (right - left - 28) * (value - x_low) / span

    def y(value: float) -> float:
        return bottom - (bottom - top) * value

    parts = [_svg(chart_id, css, width, height, title, extra), _heading(title, (left + right) / 2)]
    for value in nice_ticks(0.0, 1.0, 5):
        parts.append(f"<line x1='{left}' y1='{y(value):.1f}' x2='{right}' y2='{y(value):.1f}' stroke='#eee'/>"
                     f"<text class='y-tick' x='{left - 6}' y='{y(value) + 4:.1f}' text-anchor='end' "
                     f"font-size='11'>{escape(y_format(value))}</text>")
    for value in ticks:
        parts.append(f"<line x1='{x(value):.1f}' y1='{bottom}' x2='{x(value):.1f}' y2='{bottom + 4}' stroke='#333'/>"
                     f"<text class='x-tick' x='{x(value):.1f}' y='{bottom + 17}' text-anchor='middle' "
                     f"font-size='11'>{escape(tick_label(value))}</text>")
    parts.append(f"<line x1='{left}' y1='{bottom}' x2='{right}' y2='{bottom}' stroke='#333'/>"
                 f"<line x1='{left}' y1='{bottom}' x2='{left}' y2='{top}' stroke='#333'/>")
    for s in series:
        shown = [p for p in s.points if p.n is None or p.n > 0]
        if s.line and len(shown) > 1:
            parts.append(f"<polyline fill='none' stroke='{s.colour}' stroke-width='1.5' points='"
                         + " ".join(f"{x(p.x):.1f},{y(p.y):.1f}" for p in shown) + "'/>")
        for p in shown:
            if p.low is not None and p.high is not None:
                parts.append(whisker(x(p.x), y(p.low), y(p.high), s.colour, vertical=True))
            attrs = "".join(f" data-{k}='{escape(v)}'" for k, v in p.attrs.items())
            count = f" (n={p.n})" if p.n is not None else ""
            parts.append(f"<circle class='point'{attrs} cx='{x(p.x):.1f}' cy='{y(p.y):.1f}' r='4' fill='{s.colour}'>"
                         f"<title>{escape(s.name)} {tick_label(p.x)}: {escape(y_format(p.y))}{count}</title></circle>")
    parts.append(_axis_titles(x_title, y_title, left, right, top, bottom, height))
    parts.append(_legend([(s.name, s.colour) for s in series], right + 12, top + 10))
    return "".join(parts) + "</svg>"


def bar_chart(values: dict[str, float], *, chart_id: str, title: str, x_title: str, y_title: str,
              fmt: Callable[[float], str], top: float | None = None, width: int = 640) -> str:
    """Horizontal bars, full width at `top` (default: the largest value), under a title, with a titled value axis
    below; the label column grows with the longest label, so none runs into the y title."""
    if not values:
        return "<p class='muted'>nothing to plot</p>"
    top = top or max(values.values()) or 1.0
    left = max(120, math.ceil(max(title_length(label) for label in values)) + 28)
    width = max(width, left + 300)
    row, right, head = 22, width - 80, 34
    bottom = head + max(row * len(values), math.ceil(title_length(y_title)))  # one bar leaves room for the y title
    height = bottom + 48
    parts = [_svg(chart_id, "chart", width, height, title), _heading(title, (left + right) / 2)]
    for value in nice_ticks(0.0, top, 5):
        if value > top + 1e-9:
            continue
        gx = left + (right - left) * value / top
        parts.append(f"<line x1='{gx:.1f}' y1='{head}' x2='{gx:.1f}' y2='{bottom}' stroke='#eee'/>"
                     f"<text class='x-tick' x='{gx:.1f}' y='{bottom + 15}' text-anchor='middle' "
                     f"font-size='11'>{escape(fmt(value))}</text>")
    for i, (label, value) in enumerate(values.items()):
        y = head + i * row
        w = max(1.0, (right - left) * value / top)
        parts.append(f"<text x='{left - 6}' y='{y + 15}' text-anchor='end' font-size='12'>{escape(label)}</text>"
                     f"<rect class='bar' data-label='{escape(label)}' data-value='{value:.6g}' x='{left}' "
                     f"y='{y}' width='{w:.1f}' height='{row - 6}' fill='{BLUE}'/>"
                     f"<text x='{left + w + 6:.1f}' y='{y + 15}' font-size='12'>{escape(fmt(value))}</text>")
    parts.append(f"<line x1='{left}' y1='{bottom}' x2='{right}' y2='{bottom}' stroke='#333'/>"
                 f"<line x1='{left}' y1='{head}' x2='{left}' y2='{bottom}' stroke='#333'/>")
    parts.append(_axis_titles(x_title, y_title, left, right, head, bottom, height, y_at=12))
    return "".join(parts) + "</svg>"


def paired_bars(rows: Sequence[tuple[str, Point | None, Point | None]], names: tuple[str, str], *, chart_id: str,
                title: str, x_title: str, y_title: str, note: str = "", note_data: dict[str, str] | None = None,
                width: int = 640) -> str:
    """Per group, two runs' accuracy as two bars (legend: `names`) with 95% whiskers on a 0-100% axis, under a
    title and a `note` line; the label column, the width and the legend grow with their text, so none is cut."""
    if not rows:
        return "<p class='muted'>nothing to plot</p>"
    labels = max(title_length(label) for label, _, _ in rows)
    row, left, head = 34, max(120, math.ceil(labels) + 28), 86 if note else 70
    legend_end = left + 14 + max(title_length(name, 11) for name in names)
    width = max(width, math.ceil(legend_end) + 12, math.ceil(title_length(note, 11)) + 24,
                math.ceil(title_length(title, 13)) + 24, left + 300)
    right = width - 40
    bottom = head + row * len(rows)
    height = bottom + 48

    def gx(value: float) -> float:
        return left + (right - left) * value

    parts = [_svg(chart_id, "chart", width, height, title), _heading(title, width / 2, note, note_data),
             _legend([(names[0], GREY), (names[1], BLUE)], left, head - 26)]
    for value in nice_ticks(0.0, 1.0, 5):
        parts.append(f"<line x1='{gx(value):.1f}' y1='{head}' x2='{gx(value):.1f}' y2='{bottom}' stroke='#eee'/>"
                     f"<text class='x-tick' x='{gx(value):.1f}' y='{bottom + 15}' text-anchor='middle' "
                     f"font-size='11'>{percent(value)}</text>")
    for i, (label, a, b) in enumerate(rows):
        y = head + i * row
        parts.append(f"<text x='{left - 6}' y='{y + 18}' text-anchor='end' font-size='12'>{escape(label)}</text>")
        for k, (point, colour, run) in enumerate(((a, GREY, "a"), (b, BLUE, "b"))):
            if point is None:
                continue
            top = y + 3 + k * 14
            parts.append(f"<rect class='bar' data-run='{run}' data-label='{escape(label)}' "
                         f"data-value='{point.y:.6g}' data-n='{point.n}' x='{left}' y='{top}' "
                         f"width='{max(1.0, gx(point.y) - left):.1f}' height='12' fill='{colour}'>"
                         f"<title>{escape(names[k])}: {percent(point.y)} (n={point.n})</title></rect>")
            if point.low is not None and point.high is not None:
                parts.append(whisker(top + 6, gx(point.low), gx(point.high), "#222", vertical=False, cap=4))
    parts.append(f"<line x1='{left}' y1='{bottom}' x2='{right}' y2='{bottom}' stroke='#333'/>"
                 f"<line x1='{left}' y1='{head}' x2='{left}' y2='{bottom}' stroke='#333'/>")
    parts.append(_axis_titles(x_title, y_title, left, right, head, bottom, height, y_at=12))
    return "".join(parts) + "</svg>"


def standalone(svg: str) -> str:
    """The chart as an .svg file of its own (an XML declaration before the inline element)."""
    return "<?xml version='1.0' encoding='UTF-8'?>\n" + svg + "\n"


def write_chart(folder: RunFolder | Path, name: str, svg: str) -> list[Path]:
    """`<folder>/<name>.svg` and the same drawing as `<name>.png` (raster.py); nothing for a placeholder."""
    if not svg.startswith("<svg"):
        return []
    folder = RunFolder.of(folder)
    folder.write_atomic(f"{name}.svg", standalone(svg))
    folder.write_atomic(f"{name}.png", svg_to_png(svg))
    return [folder.path / f"{name}.svg", folder.path / f"{name}.png"]


def write_charts(folder: RunFolder | Path, charts: dict[str, str]) -> list[Path]:
    """Each chart as an SVG and a PNG file (`write_chart`); charts of an earlier report that this one no longer
    draws are removed, so the folder never shows a stale plot."""
    folder = RunFolder.of(folder)
    written = [path for name, svg in charts.items() for path in write_chart(folder, name, svg)]
    kept = {path.name for path in written}
    for old in folder.names():
        if old.endswith((".svg", ".png")) and old not in kept:
            folder.remove_tree(old)
    return written
