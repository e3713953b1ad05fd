"""Each report chart is also a PNG drawn from the same SVG: the right size and resolution, and ink where the SVG
puts its axes, lines, points, bars, legend and axis titles (tests read pixels at the SVG's own coordinates)."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image, ImageColor

from trompe_agents.illusion.plots import BLUE, RED, Point, Series, bar_chart, paired_bars, write_charts, xy_chart
from trompe_agents.illusion.raster import SCALE, svg_to_png

WHITE = (255, 255, 255)


def rgb(colour: str) -> tuple[int, int, int]:
    return ImageColor.getrgb(colour)[:3]


def psychometric() -> str:
    return xy_chart([Series("genuine", RED, [Point(0.0, 0.2, 0.1, 0.4, 10)], line=False),
                     Series("counterfactual", BLUE, [Point(0.02, 0.5, 0.3, 0.7, 10), Point(0.05, 0.9, 0.7, 1.0, 10)])],
                    chart_id="p", title="ebbinghaus", x_title="effect strength (magnitude)",
                    y_title="illusion-consistent answers (%)")


def png(svg: str) -> Image.Image:
    image = Image.open(io.BytesIO(svg_to_png(svg)))
    assert image.format == "PNG"
    return image.convert("RGB")


def at(image: Image.Image, x: float, y: float) -> tuple[int, int, int]:
    """The PNG pixel under SVG point (x, y)."""
    return image.getpixel((round(x * SCALE), round(y * SCALE)))


def ink(image: Image.Image, box: tuple[float, float, float, float]) -> int:
    """Non-white PNG pixels inside an SVG-coordinate box."""
    crop = image.crop(tuple(round(v * SCALE) for v in box))
    return sum(pixel != WHITE for pixel in crop.get_flattened_data())


def attrs(svg: str, element: str, css: str = "") -> list[dict[str, str]]:
    found = re.findall(rf"<{element} {re.escape(css)}([^>]*)>", svg)
    return [dict(re.findall(r"([\w-]+)='([^']*)'", text)) for text in found]


def test_the_png_is_the_svgs_drawing_at_twice_its_size_with_axes_points_and_titles():
    svg = psychometric()
    image = png(svg)
    assert image.size == (420 * SCALE, 280 * SCALE)
    assert Image.open(io.BytesIO(svg_to_png(svg))).info["dpi"] == pytest.approx((192, 192), abs=0.01)
    assert at(image, 2, 2) == WHITE  # background
    # the axes: the SVG's last two plain lines before the data are the x and y axis, drawn in #333
    axes = [a for a in attrs(svg, "line") if a.get("stroke") == "#333" and a["y1"] == a["y2"]]
    x_axis = max(axes, key=lambda a: float(a["x2"]) - float(a["x1"]))
    assert at(image, (float(x_axis["x1"]) + float(x_axis["x2"])) / 2, float(x_axis["y1"])) == rgb("#333")
    # each point is drawn in its series' colour at the SVG's cx, cy
    for point in attrs(svg, "circle", "class='point'"):
        assert at(image, float(point["cx"]), float(point["cy"])) == rgb(point["fill"])
    # the polyline joining the counterfactual points: ink midway between them
    counterfactual = [p for p in attrs(svg, "circle", "class='point'") if p["fill"] == BLUE]
    mid = [(float(counterfactual[0][k]) + float(counterfactual[1][k])) / 2 for k in ("cx", "cy")]
    assert ink(image, (mid[0] - 2, mid[1] - 2, mid[0] + 2, mid[1] + 2)) > 0
    # the legend swatches in the series' colours
    swatches = re.findall(r"<g class='legend'><rect x='([\d.]+)' y='([\d.]+)'[^>]*fill='([^']+)'", svg)
    x, y, fill = swatches[0]
    assert at(image, float(x) + 5, float(y) + 5) == rgb(fill)
    # the axis titles: ink along the bottom (x title) and up the left edge (y title, turned)
    assert ink(image, (100, 268, 300, 280)) > 200 and ink(image, (2, 60, 18, 220)) > 200
    assert ink(image, (20, 60, 40, 220)) < ink(image, (2, 60, 18, 220))  # the y title stays at the left edge
    # and the SVG itself still has both titles
    assert "effect strength (magnitude)</text>" in svg and "illusion-consistent answers (%)</text>" in svg


def test_bars_and_paired_bars_are_drawn_where_the_svg_puts_them():
    bars = bar_chart({"crop": 0.5, "draw_line": 1.0}, chart_id="t", title="Tool use", x_title="samples (%)",
                     y_title="tool", fmt=str, top=1.0)
    image = png(bars)
    for bar in attrs(bars, "rect", "class='bar'"):
        middle = (float(bar["x"]) + float(bar["width"]) / 2, float(bar["y"]) + float(bar["height"]) / 2)
        assert at(image, *middle) == rgb(BLUE)
    pairs = paired_bars([("size", Point(0, 0.4, 0.2, 0.6, 10), Point(0, 0.8, 0.6, 0.9, 10))], ("A", "B"),
                        chart_id="c", title="Accuracy", x_title="accuracy (%)", y_title="category")
    image = png(pairs)
    for bar in attrs(pairs, "rect", "class='bar'"):
        assert at(image, float(bar["x"]) + 3, float(bar["y"]) + 3) == rgb(bar["fill"])


def test_write_charts_writes_an_svg_and_a_png_per_chart_and_removes_stale_ones(tmp_path):
    (tmp_path / "psychometric-zollner.png").write_bytes(b"old")  # a family an earlier report drew
    written = write_charts(tmp_path, {"psychometric-ebbinghaus": psychometric(), "rounds": "<p>nothing</p>"})
    assert sorted(p.name for p in written) == ["psychometric-ebbinghaus.png", "psychometric-ebbinghaus.svg"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["psychometric-ebbinghaus.png",
                                                          "psychometric-ebbinghaus.svg"]
    assert Image.open(tmp_path / "psychometric-ebbinghaus.png").size == (840, 560)


@pytest.mark.parametrize("svg, error", [
    ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><path d='M0 0'/></svg>", "<path>"),
    ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><text x='1' y='1' "
     "transform='rotate(-90 5 5)'>a</text></svg>", "own anchor"),
    ("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><text x='1' y='1' "
     "transform='rotate(-45 1 1)'>a</text></svg>", "quarter turns"),
    ("<p/>", "not an <svg>"),
])
def test_an_element_the_png_cannot_draw_is_an_error_not_a_missing_mark(svg, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        svg_to_png(svg)


@pytest.mark.usefixtures("scripted_on_path")
def test_compare_writes_its_chart_as_svg_and_png_beside_the_page(probe_dir, tmp_path, monkeypatch, capsys):
    from trompe_agents.illusion.cli import main

    monkeypatch.setenv("TROMPE_TEST_PLANTED_KIND", "timeout")
    for name in ("a", "b"):
        main(["run", "--dataset", str(probe_dir), "--out", str(tmp_path / name), "--backend", "function",
              "--model", "planted_failures:yes_but_one_fails", "--no-tools", "--no-progress"])
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    report = tmp_path / "b" / "report"
    svg = (report / "compare-categories.svg").read_text()
    assert svg.startswith("<?xml") and "class='axis-title x-title'" in svg and "class='axis-title y-title'" in svg
    width, height = (int(v) for v in re.search(r"width='(\d+)' height='(\d+)'", svg).groups())
    image = Image.open(report / "compare-categories.png")
    assert image.size == (width * SCALE, height * SCALE)
    bar = attrs(svg, "rect", "class='bar'")[0]
    assert at(image.convert("RGB"), float(bar["x"]) + 3, float(bar["y"]) + 3) == rgb(bar["fill"])


def test_an_interval_is_drawn_with_a_cap_across_each_end():
    """Whiskers as a reader expects them: in the PNG, ink across the line at the interval's low and high ends."""
    svg = psychometric()
    image = png(svg)
    whiskers = re.findall(r"<g class='whisker'>(.*?)</g>", svg)
    assert len(whiskers) == 3  # one per point with an interval
    for whisker in whiskers:
        body, low_cap, high_cap = [dict(re.findall(r"([\w-]+)='([^']*)'", line)) for line in
                                   re.findall(r"<line ([^>]*)/>", whisker)]
        assert body["x1"] == body["x2"] and low_cap["y1"] == low_cap["y2"] == body["y1"]
        for cap in (low_cap, high_cap):  # each cap is drawn 4 px either side of the whisker
            x, y = float(cap["x1"]), float(cap["y1"])
            assert float(cap["x2"]) - x == 8 and ink(image, (x, y - 1, x + 2, y + 1)) > 0


def test_a_bar_chart_of_one_bar_has_room_for_its_turned_y_title():
    """rounds.png of a run whose samples all took one round: the y title is not cut at the top or bottom."""
    title = "rounds (model turns)"
    svg = bar_chart({"1": 40}, chart_id="rounds", title="Rounds per sample", x_title="samples (count)",
                    y_title=title, fmt=str)
    image = png(svg)
    y_title = attrs(svg, "text", "class='axis-title y-title'")[0]
    middle, length = float(y_title["y"]), 0.6 * 12 * len(title)
    assert middle - length / 2 > 0 and middle + length / 2 < image.height / SCALE
    assert ink(image, (2, 0, 18, 4)) == 0 and ink(image, (2, middle - 10, 18, middle + 10)) > 0
