"""Results out of the HTML: `report --json` on stdout, report/samples.csv with the documented columns, the summary
in lmms-eval's results shape, each chart as an SVG file with titled axes (and a PNG of it), and a readable settings
table."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from html import escape
from pathlib import Path

import pyarrow.csv
import pytest
from PIL import Image
from hypothesis import given
from hypothesis import strategies as st

from trompe_agents.illusion.cli import main
from trompe_agents.illusion.export import CSV_COLUMNS
from trompe_agents.illusion.plots import nice_ticks, tick_label
from trompe_agents.probes.base import FAMILIES
from runlines import written
import needs

pytestmark = pytest.mark.usefixtures("scripted_on_path")
SCRIPTED = ["--backend", "function", "--model", "scripted:line_then_yes", "--no-progress"]


def run_and_report(probe_dir, out, capsys, *extra) -> dict:
    assert main(["run", "--dataset", str(probe_dir), "--out", str(out), *SCRIPTED, *extra]) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # the whole of stdout is one JSON document


def test_report_json_holds_totals_groups_and_the_lmms_eval_shape(probe_dir, probes, tmp_path, capsys):
    out = tmp_path / "run"
    summary = run_and_report(probe_dir, out, capsys)
    right = sum(s.answer == "yes" for s in probes)  # line_then_yes answers yes to everything
    totals = summary["totals"]
    assert (totals["samples"], totals["answered"], totals["failed"]) == (8, 8, 0)
    assert (totals["right"], totals["scored"], totals["accuracy"]) == (right, 8, right / 8)
    assert summary["harness"]["name"] == "trompe illusion-agent" and summary["harness"]["version"]
    assert summary["run"]["model"] == "scripted:line_then_yes" and summary["run"]["fingerprint"]["task"] == 1
    assert set(summary["groups"]["family"]) == {s.metadata["family"] for s in probes}
    lmms = summary["lmms_eval"]
    assert lmms["results"]["jsonl_task1"]["accuracy,none"] == right / 8
    assert lmms["results"]["jsonl_task1"]["alias"] == "jsonl_task1"
    assert lmms["n-samples"]["jsonl_task1"] == {"original": 8, "effective": 8}
    assert lmms["higher_is_better"]["jsonl_task1"]["accuracy"] is True
    assert json.loads((out / "report" / "summary.json").read_text()) == summary


def test_samples_csv_has_the_documented_columns_and_reads_in_a_dataframe_library(probe_dir, probes, tmp_path,
                                                                                  capsys):
    out = tmp_path / "run"
    run_and_report(probe_dir, out, capsys, "--limit", "4")
    path = out / "report" / "samples.csv"
    rows = list(csv.DictReader(path.open()))
    assert tuple(rows[0]) == CSV_COLUMNS == ("id", "category", "family", "answer", "gold", "correct", "error_kind",
                                             "rounds", "tools_used", "tokens", "cost", "magnitude",
                                             "magnitude_unit", "counterfactual")
    records = written(out)
    assert [r["id"] for r in rows] == [s.id for s in probes[:4]]
    for row in rows:
        record = records[row["id"]]
        assert (row["answer"], row["gold"], row["family"]) == ("yes", record["label"], record["family"])
        assert row["correct"] == str(record["correct"]) and row["tools_used"] == "draw_line"
        assert row["error_kind"] == "" and row["cost"] == ""  # no error; no price known for a scripted model
        assert (float(row["magnitude"]), row["magnitude_unit"], row["counterfactual"]) == (
            record["magnitude"], record["magnitude_unit"] or "", str(record["counterfactual"]))  # the plots' x
    table = pyarrow.csv.read_csv(path)  # an independent reader: typed columns, blanks as missing
    assert table.column_names == list(CSV_COLUMNS)
    assert str(table.schema.field("correct").type) == "bool" and table.column("cost").null_count == 4
    assert str(table.schema.field("counterfactual").type) == "bool"


def test_pandas_reads_samples_csv_with_the_types_the_page_gives(probe_dir, tmp_path, capsys):
    """docs/illusion-agent.md: `pandas.read_csv` reads it as is, booleans as booleans, blanks as missing."""
    try:
        import pandas
    except ImportError:
        needs.missing("pandas", "pip install -e '.[dev]' installs it")
    out = tmp_path / "run"
    run_and_report(probe_dir, out, capsys, "--limit", "4")
    frame = pandas.read_csv(out / "report" / "samples.csv")
    assert list(frame.columns) == list(CSV_COLUMNS)
    assert (frame["correct"].dtype, frame["counterfactual"].dtype, frame["magnitude"].dtype) == (bool, bool, float)
    assert frame["cost"].isna().all() and frame["error_kind"].isna().all()  # no price, no error: missing
    units = {row.family: row.magnitude_unit for row in frame.itertuples()}
    assert units and all(unit == (FAMILIES[family].unit or None) or pandas.isna(unit) and not FAMILIES[family].unit
                         for family, unit in units.items())


def test_every_chart_is_an_svg_file_with_titled_axes_and_the_header_is_a_settings_table(probe_dir, tmp_path,
                                                                                        capsys):
    out = tmp_path / "run"
    run_and_report(probe_dir, out, capsys, "--thinking", "low")
    plots = out / "report" / "plots"
    names = sorted(p.stem for p in plots.glob("*.svg"))
    assert names == ["psychometric-ebbinghaus", "psychometric-hering", "psychometric-poggendorff",
                     "psychometric-simultaneous_contrast", "rounds", "tool-use"]
    for path in plots.glob("*.svg"):
        svg = path.read_text()
        assert svg.startswith("<?xml") and "xmlns='http://www.w3.org/2000/svg'" in svg
        titles = re.findall(r"class='axis-title ([xy])-title'[^>]*>([^<]+)<", svg)
        assert [axis for axis, _ in titles] == ["x", "y"] and all(text.strip() for _, text in titles), path.name
        width, height = (int(v) for v in re.search(r"width='(\d+)' height='(\d+)'", svg).groups())
        assert Image.open(path.with_suffix(".png")).size == (2 * width, 2 * height)  # the same chart as a PNG
    psycho = (plots / "psychometric-ebbinghaus.svg").read_text()
    assert "effect strength drawn (size difference, fraction of the mean; 0: genuine illusion)" in psycho
    assert "illusion-consistent answers (%)" in psycho
    assert re.findall(r"class='y-tick'[^>]*>([^<]+)<", psycho) == ["0%", "25%", "50%", "75%", "100%"]
    legend = re.search(r"<g class='legend'>(.*?)</g>", psycho).group(1)
    assert ">genuine<" in legend and ">counterfactual<" in legend
    index = (out / "report" / "index.html").read_text()
    settings = dict(re.findall(r"<tr><th>([^<]+)</th><td>([^<]*)</td></tr>",
                               index.split("<table class='settings'>")[1].split("</table>")[0]))
    assert settings["backend / model"] == "function / scripted:line_then_yes"
    assert settings["thinking"] == "low" and settings["colour normalisation"] == "off: images as given"
    assert settings["answer types"] == "yesno 8"  # every probe is a yes/no item
    assert settings["trompe version"] == json.loads((out / "run.json").read_text())["trompe"]
    assert "{" not in "".join(settings.values())  # readable values, not raw JSON
    (plots / "psychometric-zollner.svg").write_text("<svg/>")  # a family an earlier report drew
    assert main(["report", str(out)]) == 0
    assert sorted(p.stem for p in plots.glob("*.svg")) == names  # no stale plot is left beside the new ones
    assert sorted(p.stem for p in plots.glob("*.png")) == names


def test_ticks_read_as_written():
    assert [tick_label(v) for v in (0, 0.25, 0.5, 0.75, 1.0)] == ["0", "0.25", "0.5", "0.75", "1"]
    assert nice_ticks(0, 1, 5) == [0, 0.25, 0.5, 0.75, 1.0]
    assert nice_ticks(0, 7, 5) == [0, 2, 4, 6]


@given(st.floats(0, 1e6, allow_nan=False), st.floats(1e-3, 1e6, allow_nan=False))
def test_ticks_are_evenly_spaced_round_values_covering_the_range(low, width):
    ticks = nice_ticks(low, low + width)
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
    assert 2 <= len(ticks) <= 6 and len({round(s / max(steps), 6) for s in steps}) == 1
    assert ticks[0] <= low + 1e-9 * max(1, low) and ticks[-1] >= (low + width) - max(steps) * (1 + 1e-6)
    assert all(float(tick_label(t)) == pytest.approx(t, rel=1e-9, abs=1e-12) for t in ticks)


def test_the_shell_pipeline_and_a_dataframe_read_work_on_a_fresh_offline_run(probe_dir, tmp_path):
    """As the README's offline snippet leaves a user: real processes, `report --json` piped into json.load, the
    CSV read by pandas where installed (else the csv module) with the documented columns."""
    (tmp_path / "mymodel.py").write_text('def decide(messages, tools):\n    return {"reasons": "r", "answer": "yes"}\n')
    reader = ("import csv, sys\ntry:\n    import pandas\nexcept ImportError:\n    pandas = None\n"
              "path = 'runs/offline/report/samples.csv'\n"
              "columns = list(pandas.read_csv(path).columns) if pandas else next(csv.reader(open(path)))\n"
              "print(','.join(columns))")
    script = (f"PYTHONPATH=. illusion-agent --backend function --model mymodel:decide run --dataset {probe_dir} "
              "--task 1 --out runs/offline --no-progress\n"
              "illusion-agent report runs/offline --json | python -c \"import json,sys; "
              "print(json.load(sys.stdin)['totals']['samples'])\"\n"
              f"python -c \"{reader}\"")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    total, columns = done.stdout.splitlines()[-2:]
    assert total == "8" and tuple(columns.split(",")) == CSV_COLUMNS


def test_each_psychometric_x_axis_names_its_familys_unit(probe_dir, tmp_path, capsys):
    """Zöllner's magnitudes are degrees, Ebbinghaus's a fraction of the mean size: the x title says which."""
    from trompe_agents.probes.base import registered_families

    families = registered_families()
    assert all(f.unit for f in families.values() if f.suite == "illusions")  # every illusion family has one
    out = tmp_path / "run"
    run_and_report(probe_dir, out, capsys)
    for svg in (out / "report" / "plots").glob("psychometric-*.svg"):
        family = svg.stem.removeprefix("psychometric-")
        title = re.search(r"class='axis-title x-title'[^>]*>([^<]*)<", svg.read_text()).group(1)
        assert title == f"effect strength drawn ({escape(families[family].unit)}; 0: genuine illusion)"
