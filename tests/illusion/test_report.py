"""The HTML report: tool-use chart with the right bars, accuracy tables, one page per sample with images."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from runlines import write_run
from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.report import write_report
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.illusion.stats import rate
from trompe_agents.toolclient import ToolClient


class Page(HTMLParser):
    """Collects the elements the tests look at."""

    def __init__(self):
        super().__init__()
        self.svg: str | None = None
        self.bars: dict[str, dict[str, float]] = {}
        self.images: list[str] = []
        self.links: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svg = a.get("id")
        elif tag == "rect" and "bar" in a.get("class", ""):
            self.bars.setdefault(self.svg, {})[a["data-label"]] = float(a["data-value"])
        elif tag == "img":
            self.images.append(a["src"])
        elif tag == "a":
            self.links.append(a["href"])
        elif tag == "table" and a.get("data-group"):
            self._table = a["data-group"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def varied_tools(messages, tools):
    """Sample k draws a line; even k also crops; k divisible by 4 also compares; answers by parity."""
    k = int(re.search(r"sample (\d+)", messages[1].text).group(1))
    done = {m.tool_name for m in messages if m.role == "tool"}
    plan = ["draw_line"] + (["crop"] if k % 2 == 0 else []) + (["compare_crops"] if k % 4 == 0 else [])
    args = {"draw_line": {"image": "original", "start": [0, 2], "end": [30, 2]},
            "crop": {"image": "original", "box": [0, 0, 32, 32], "zoom": 2},
            "compare_crops": {"crops": [{"image": "original", "box": [0, 0, 16, 16]},
                                        {"image": "original", "box": [16, 16, 32, 32]}]}}
    todo = [name for name in plan if name not in done]
    if todo:
        return tool_call(todo[0], **args[todo[0]])
    return {"reasons": f"sample {k}", "answer": "yes" if k % 2 else "no"}


async def test_report_charts_tool_use_and_pages_each_sample(probes, tmp_path):
    for k, sample in enumerate(probes):
        sample.question = f"(sample {k}) {sample.question}"
    out = tmp_path / "run"
    async with ToolClient.in_process() as tools:
        await run_samples(probes, FunctionBackend(varied_tools), tools, AgentConfig(task=1),
                          RunOptions(out=out, progress=False))
    index = write_report(out)
    page = Page()
    page.feed(index.read_text())
    assert page.bars["tool-use"] == {"draw_line": 1.0, "crop": 0.5, "compare_crops": 0.25}
    rounds = {int(k): v for k, v in page.bars["rounds"].items()}
    assert rounds == {2: 4, 3: 2, 4: 2}  # one round per tool call plus the answer
    stimulus = {row[0]: row[1:] for row in page.tables["stimulus"][1:]}
    assert set(stimulus) == {"genuine", "counterfactual"}
    yes_rate = {name: float(row[3].split("%")[0]) for name, row in stimulus.items()}
    assert all(0 <= v <= 100 for v in yes_rate.values())
    families = {row[0] for row in page.tables["family"][1:]}
    assert families == {s.metadata["family"] for s in probes}
    right = sum((("yes" if k % 2 else "no") == s.answer) for k, s in enumerate(probes))
    assert f"{rate(right, len(probes))} ({right} right of {len(probes)} answered and labelled)" in index.read_text()

    sample_pages = [link for link in page.links if link.startswith("samples/")]
    assert len(set(sample_pages)) == len(probes)
    first = Page()
    first_path = index.parent / f"samples/{probes[0].id}.html"
    first.feed(first_path.read_text())
    assert {Path(src).name for src in first.images} >= {"original.png", "img_001.png", "img_002.png",
                                                        "img_003.png"}
    for src in first.images:
        assert (first_path.parent / src).resolve().is_file(), src
    assert "compare_crops" in first_path.read_text() and "final answer from main" in first_path.read_text()


def test_tool_use_bars_are_drawn_to_scale_and_magnitudes_read_plainly(tmp_path):
    """A tool used by a quarter of the samples gets a quarter-width bar, not a full one."""
    (tmp_path / "run.json").write_text(json.dumps({"task": 1}))
    rows = [{"id": f"s{i}", "position": i, "tool_calls": ["crop"] if i == 0 else [], "family": "ponzo",
             "magnitude": 0.05 if i % 2 else 0.0, "counterfactual": bool(i % 2), "answer": "yes", "label": "yes",
             "correct": True, "agent": "main"} for i in range(4)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    html = write_report(tmp_path).read_text()
    svg = html.split("id='tool-use'", 1)[1].split("</svg>", 1)[0]
    axis = re.search(r"<line x1='([0-9.]+)' y1='([0-9.]+)' x2='([0-9.]+)' y2='\2' stroke='#333'/>", svg)
    full = float(axis.group(3)) - float(axis.group(1))  # the chart's bar area: its value axis, end to end
    bar = float(re.search(r"class='bar' data-label='crop'.*? width='([0-9.]+)'", svg).group(1))
    assert bar == full / 4
    page = Page()
    page.feed(html)
    assert [row[0] for row in page.tables["family, magnitude"][1:]] == ["ponzo 0", "ponzo 0.05"]


def report_of(folder: Path, rows: list[dict]) -> Path:
    return write_report(write_run(folder, rows))


def probe(i: int, counterfactual: bool, magnitude: float, consistent: bool, **extra) -> dict:
    """A Task I probe record whose answer asserts the illusory effect or not, phrased with either polarity."""
    label = "yes" if i % 2 else "no"  # mixed polarity: the raw yes-rate says nothing about the bias
    correct = consistent if counterfactual else not consistent
    answer = label if correct else {"yes": "no", "no": "yes"}[label]
    return {"id": f"s{i}", "family": "ebbinghaus", "counterfactual": counterfactual, "magnitude": magnitude,
            "label": label, "answer": answer, "correct": correct, "agent": "main", **extra}


def test_bias_table_and_psychometric_plot_show_illusion_consistent_rates_with_intervals(tmp_path):
    rows = ([probe(i, False, 0.0, consistent=i < 6) for i in range(8)]  # genuine: 6 of 8 fooled
            + [probe(10 + i, True, 0.1, consistent=i < 2) for i in range(4)]  # weak counterfactual: 2 of 4
            + [probe(20 + i, True, 0.3, consistent=True) for i in range(4)]  # strong: 4 of 4
            + [{"id": "f1", "family": "ebbinghaus", "counterfactual": False, "magnitude": 0.0, "label": "yes",
                "answer": None, "agent": None, "correct": None, "error_kind": "auth"}])
    html = report_of(tmp_path, rows).read_text()
    genuine = re.search(r"<tr data-family='ebbinghaus'><td>ebbinghaus</td><td data-rate='([0-9.]+)'>([^<]+)", html)
    assert float(genuine.group(1)) == 0.75 and genuine.group(2).startswith(rate(6, 8))
    svg = html.split("class='psychometric' data-family='ebbinghaus'", 1)[1].split("</svg>", 1)[0]
    points = re.findall(r"data-kind='(\w+)' data-magnitude='([0-9.]+)' data-rate='([0-9.]+)' data-n='(\d+)'", svg)
    assert points == [("genuine", "0", "0.75", "8"), ("counterfactual", "0.1", "0.5", "4"),
                      ("counterfactual", "0.3", "1", "4")]  # the failed sample is in none of them
    assert "answered by main / rescue / failed</th><td>16 / 0 / 1" in html and "auth 1" in html


def test_tool_use_counts_executed_calls_and_shows_refused_and_unknown_apart(tmp_path):
    rows = [{"id": "a", "agent": "main", "answer": "yes", "tool_calls": ["crop"], "refused_calls": ["crop"],
             "unknown_calls": ["zoom"]},
            {"id": "b", "agent": "main", "answer": "no", "tool_calls": [], "refused_calls": ["draw_line"]}]
    html = report_of(tmp_path, rows).read_text()
    page = Page()
    page.feed(html)
    assert page.bars["tool-use"] == {"crop": 0.5}  # draw_line was refused every time: not in the chart
    assert "<tr data-tool='draw_line'><td>draw_line</td><td>1</td><td>0</td></tr>" in html
    assert "<tr data-tool='zoom'><td>zoom</td><td>0</td><td>1</td></tr>" in html
