"""The figures a paper takes from a run, as a reader sees them: the compare chart names both models in its legend and
states McNemar's p (the number compare.json holds), every numeric axis names its unit, and no text runs off a chart
or over another, checked in the PNG (no ink on its border) and in headless Chromium's own text boxes."""

from __future__ import annotations

import io
import json
import re
from html import unescape
from pathlib import Path

import pytest
from PIL import Image

from browserkit import dom_after_scripts, screenshot
from trompe_agents.illusion.cli import main
from trompe_agents.illusion.plots import BLUE, Point, Series, bar_chart, paired_bars, xy_chart
from trompe_agents.illusion.raster import FACES, SCALE, _font, svg_to_png
from trompe_agents.probes import generate

pytestmark = pytest.mark.usefixtures("scripted_on_path")
WHITE = (255, 255, 255)
# Each chart's text boxes as Chromium lays them out: the ones outside their <svg>, and the pairs that overlap.
MEASURE = """<script>
const cut = [], overlaps = [];
for (const svg of document.querySelectorAll('svg')) {
  const box = svg.getBoundingClientRect(), texts = [...svg.querySelectorAll('text')];
  const rects = texts.map(t => t.getBoundingClientRect());
  rects.forEach((r, i) => {
    if (r.left < box.left || r.top < box.top || r.right > box.right || r.bottom > box.bottom)
      cut.push(svg.id + ': ' + texts[i].textContent);
    rects.slice(i + 1).forEach((q, k) => {
      if (Math.min(r.right, q.right) - Math.max(r.left, q.left) > 1 &&
          Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top) > 1)
        overlaps.push(svg.id + ': ' + texts[i].textContent + ' / ' + texts[i + 1 + k].textContent);
    });
  });
}
document.body.dataset.texts = document.querySelectorAll('svg text').length;
document.body.dataset.cut = JSON.stringify(cut);
document.body.dataset.overlaps = JSON.stringify(overlaps);
</script>"""


def run(dataset: Path, out: Path, model: str, *extra: str) -> Path:
    assert main(["run", "--dataset", str(dataset), "--out", str(out), "--backend", "function", "--model",
                 f"scripted:{model}", "--no-progress", "--router", "regex", *extra]) == 0
    return out


def border_ink(png: bytes | Path) -> int:
    """Non-white pixels on the image's outermost two-pixel frame: text or a mark that runs off the chart."""
    image = Image.open(io.BytesIO(png) if isinstance(png, bytes) else png).convert("RGB")
    width, height = image.size
    frame = [image.crop(box) for box in ((0, 0, width, 2), (0, height - 2, width, height), (0, 0, 2, height),
                                         (width - 2, 0, width, height))]
    return sum(pixel != WHITE for crop in frame for pixel in crop.get_flattened_data())


def texts(svg: str, css: str) -> list[tuple[dict[str, str], str]]:
    """(attributes, text) of each <text class='css'>."""
    found = re.findall(rf"<text class='{css}'([^>]*)>([^<]*)</text>", svg)
    return [(dict(re.findall(r"([\w-]+)='([^']*)'", attrs)), unescape(text)) for attrs, text in found]


@pytest.fixture(scope="module")
def paper(tmp_path_factory) -> dict[str, Path]:
    """A probe run of every family with its report, and the same model without tools, compared."""
    root = tmp_path_factory.mktemp("paper")
    generate("illusions", n=60, seed=5, size=96, out=root / "probes", progress=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(Path(__file__).parent))
        tools = run(root / "probes", root / "tools", "line_then_yes")
        none = run(root / "probes", root / "none", "answers_by_offer", "--no-tools")
        assert main(["report", str(tools)]) == 0 and main(["compare", str(tools), str(none)]) == 0
    return {"tools": tools, "none": none, "compare": none / "report"}


def test_the_compare_figure_names_both_models_and_states_the_p_that_compare_json_holds(paper):
    svg = (paper["compare"] / "compare-categories.svg").read_text()
    data = json.loads((paper["compare"] / "compare.json").read_text())
    legend = re.findall(r"<text x='[\d.]+' y='[\d.]+' font-size='11'>([^<]*)</text>",
                        re.search(r"<g class='legend'>(.*?)</g>", svg).group(1))
    assert legend == ["A: scripted:line_then_yes, with tools", "B: scripted:answers_by_offer, no tools"]
    assert [text for _, text in texts(svg, "chart-title")] == ["Accuracy per category"]
    [(attrs, note)] = texts(svg, "chart-note")
    test = data["mcnemar"]
    assert float(attrs["data-p"]) == test["p"]  # the figure's p is compare.json's, to the last digit
    assert note == (f"exact McNemar test over {test['pairs']} pairs: p = {test['p']:.4g} "
                    f"(right in A only {test['a_only']}, in B only {test['b_only']})")
    assert float(re.search(r"p = ([\d.e-]+)", note).group(1)) == pytest.approx(test["p"], rel=5e-4)
    # drawn in the PNG where the SVG puts it: ink along the note's line under the title
    image = Image.open(paper["compare"] / "compare-categories.png").convert("RGB")
    y = float(attrs["y"])
    line = image.crop((0, round((y - 9) * SCALE), image.width, round((y + 2) * SCALE)))
    assert sum(pixel != WHITE for pixel in line.get_flattened_data()) > 500


def test_a_legend_tells_two_runs_of_one_model_apart_by_their_folders(tmp_path, probe_dir):
    from trompe_agents.illusion.compare import compare_runs

    first, second = (run(probe_dir, tmp_path / name, "line_then_yes") for name in ("first", "second"))
    assert compare_runs(first, second).models() == (f"A: scripted:line_then_yes ({first})",
                                                    f"B: scripted:line_then_yes ({second})")


def test_every_numeric_axis_names_its_unit(paper):
    charts = [*(paper["tools"] / "report" / "plots").glob("*.svg"), paper["compare"] / "compare-categories.svg"]
    assert len(charts) > 5
    for chart in charts:
        svg = chart.read_text()
        [(_, x_title)], [(_, y_title)] = texts(svg, "axis-title x-title"), texts(svg, "axis-title y-title")
        numeric = [x_title] + ([y_title] if chart.name.startswith("psychometric") else [])
        for title in numeric:  # the categorical axes (tool, category) are named, the numeric ones carry a unit
            assert re.search(r"\((?:%|[a-z][^)]*)\)|%", title), f"{chart.name}: {title!r} names no unit"


def long_names() -> list[str]:
    """Charts with long model, category, family, tool and axis names: they grow to hold their text."""
    long = "claude-sonnet-4-5-20250929 via the anthropic batch API, thinking high"
    pairs = paired_bars([("an unusually long category name", Point(0, 0.4, 0.2, 0.6, 10), None)], (long, long[::-1]),
                        chart_id="c", title="Accuracy per category", x_title="accuracy (%)", y_title="category",
                        note="exact McNemar test over 1000 pairs: p = 1.234e-05 (right in A only 123, in B only 7)")
    curve = xy_chart([Series("counterfactual probes of the long family", BLUE, [Point(0, 0.5, 0.2, 0.8, 9)])],
                     chart_id="x", title="a family with a rather long name: illusion-consistent answers",
                     x_title="effect strength drawn (difference, a fraction of the mean length; 0: genuine illusion)",
                     y_title="illusion-consistent answers (%)")
    tools = bar_chart({"sliding_window_detection_with_a_long_name": 0.25, "crop": 1.0}, chart_id="t",
                      title="Tool use", x_title="samples in which the server ran the tool (%)", y_title="tool",
                      fmt=str, top=1.0)
    return [pairs, curve, tools]


def test_no_text_runs_off_a_chart_in_the_png(paper):
    """Every PNG of the report and the compare page, and charts with long names, leave their border blank."""
    pngs = [*(paper["tools"] / "report" / "plots").glob("*.png"), paper["compare"] / "compare-categories.png"]
    for png in pngs:
        assert border_ink(png) == 0, f"{png.name}: ink on the border, something runs off the chart"
    for svg in long_names():
        assert border_ink(svg_to_png(svg)) == 0


def test_chromium_lays_out_every_text_inside_its_chart_and_clear_of_the_others(paper, tmp_path):
    charts = sorted((paper["tools"] / "report" / "plots").glob("*.svg")) + [paper["compare"] /
                                                                           "compare-categories.svg"]
    svgs = [chart.read_text().split("\n", 1)[1] for chart in charts] + long_names()  # inline: no XML declaration
    page = tmp_path / "charts.html"
    page.write_text("<!doctype html><html><body style='margin:0'>" + "".join(f"<div>{s}</div>" for s in svgs)
                    + MEASURE + "</body></html>")
    dom = dom_after_scripts(page)
    body = dict(re.findall(r'data-(\w+)="([^"]*)"', re.search(r"<body[^>]*>", dom).group(0)))
    assert int(body["texts"]) == sum(svg.count("<text") for svg in svgs)  # the script measured every text
    assert json.loads(unescape(body["cut"])) == []
    assert json.loads(unescape(body["overlaps"])) == []
    shot = screenshot(page, tmp_path / "charts.png", 700, 900)
    assert Image.open(shot).convert("RGB").getcolors(1 << 20) is not None


def test_the_png_sets_titles_in_a_bold_typeface_not_a_thickened_one():
    """The compare and psychometric titles are bold: DejaVu Sans Bold where installed (Debian's default)."""
    font, bold = _font(26, bold=True)
    if not bold:
        pytest.skip(f"{FACES[1]} is not installed: titles fall back to Pillow's face, thickened")
    assert font.getname() == ("DejaVu Sans", "Bold") and _font(22)[0].getname() == ("DejaVu Sans", "Book")
