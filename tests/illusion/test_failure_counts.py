"""Every ErrorKind, planted in a real run, is counted alike by the console summary, the HTML report,
`report --json` and `score --json`: the same failed, scored and right counts, and the kind named in each.

A run over the shared probe set with the function backend answers every sample but one, which fails with the
planted kind (planted_failures.py); the test is parametrised over ErrorKind, so a new kind is covered as it is
added.
"""

from __future__ import annotations

import html
import json
import re

import pytest

from errorkinds import stops_run
from trompe_kernel.exits import CommandExit, STOPPED, UNANSWERED
from trompe_agents.failures import DISK_KINDS, ErrorKind
from trompe_agents.illusion.cli import main
from trompe_agents.illusion.runner import STOP_AFTER
from runlines import written
from trompe_agents.records import SampleResult

pytestmark = pytest.mark.usefixtures("scripted_on_path")


def page_text(path) -> str:
    """The report page as a reader sees it: no markup, no charts."""
    text = re.sub(r"<(style|svg)\b.*?</\1>", " ", path.read_text(), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


@pytest.mark.parametrize("kind", [k for k in ErrorKind if k not in DISK_KINDS])  # those stop the run: below
def test_a_planted_failure_is_counted_alike_by_summary_report_and_json(kind, probe_dir, tmp_path, capsys,
                                                                        monkeypatch):
    monkeypatch.setenv("TROMPE_TEST_PLANTED_KIND", str(kind))
    out = tmp_path / "run"
    code = main(["run", "--dataset", str(probe_dir), "--out", str(out), "--backend", "function", "--model",
                 "planted_failures:yes_but_one_fails", "--no-tools", "--no-progress"])
    console = " ".join(capsys.readouterr().out.split())
    records = list(written(out).values())
    failed = [r for r in records if SampleResult.from_json(r).failed]
    assert [SampleResult.from_json(r).failure for r in failed] == [kind]  # planted as a real run records it
    assert code != 0  # a run with a sample left unanswered does not exit 0
    right = sum(bool(r["correct"]) for r in records if not SampleResult.from_json(r).failed)

    assert main(["report", str(out), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    page = page_text(out / "report" / "index.html")

    # the console summary (stats.summary, metrics.summary_line)
    assert f"8 results: answered 7 (main 7, rescue 0), failed 1 ({kind} 1)" in console
    assert "over 7 answered" in console and "8 scored, 1 of them failed, 0 unlabelled" in console
    # report --json (export.summary)
    totals = figures["totals"]
    assert (totals["samples"], totals["answered"], totals["failed"], totals["failures"]) == (8, 7, 1, {kind: 1})
    assert (totals["right"], totals["scored"]) == (right, 7)
    assert (figures["benchmark"]["scored"], figures["benchmark"]["failed"]) == (8, 1)
    # the HTML report (report.index_page, metrics_section)
    assert "answered by main / rescue / failed 7 / 0 / 1" in page and f"failures by kind {kind} 1" in page
    assert f"({right} right of 7 answered and labelled)" in page
    assert "8 labelled samples scored (1 failed: the agent read no answer" in page
    # the per-sample CSV names the kind on the failed sample's row
    assert f",{kind}," in (out / "report" / "samples.csv").read_text()
    # and `score --json` (rescore.score_run) counts it as the report's benchmark section does
    assert main(["score", str(out), "--output", str(tmp_path / "score.json")]) == 0
    score = json.loads((tmp_path / "score.json").read_text())
    assert score["counts"] == {"records": 8, "scored": 8, "failed": 1, "unlabelled": 0}
    assert "8 scored, 1 of them failed" in score["summary"]


@pytest.mark.parametrize("kind", [k for k in ErrorKind if k not in DISK_KINDS])  # those stop at once: below
def test_a_run_stops_early_exactly_for_the_kinds_that_stop_a_run(kind, probe_dir, probes, tmp_path, capsys,
                                                                 monkeypatch):
    """Every sample failing alike: a kind that would fail every later sample (a bad key, a spent account) stops
    the run after the first samples, so the rest are not sent at the vendor's expense; any other kind is tried on
    every sample."""
    monkeypatch.setenv("TROMPE_TEST_PLANTED_KIND", str(kind))
    out = tmp_path / "run"
    code = main(["run", "--dataset", str(probe_dir), "--out", str(out), "--backend", "function", "--model",
                 "planted_failures:every_sample_fails", "--no-tools", "--no-progress", "--concurrency", "1"])
    err = capsys.readouterr().err
    records = written(out)
    assert all(SampleResult.from_json(r).failure == kind for r in records.values())
    if stops_run(kind.value):  # as the table says, not as the code under test says
        assert (code, len(records)) == (STOPPED, STOP_AFTER) and STOP_AFTER < len(probes)
        assert f"the first {STOP_AFTER} samples failed with the same error" in err
    else:
        assert (code, len(records)) == (UNANSWERED, len(probes))


@pytest.mark.parametrize("kind", sorted(DISK_KINDS))
def test_a_disk_failure_stops_the_run_and_what_it_recorded_is_counted_alike(kind, probe_dir, tmp_path, capsys,
                                                                           monkeypatch):
    """A sample whose trace the disk refused stops the run (exit 1, one line naming --out); the report and
    `score --json` count the records it left, the failed one under its kind."""
    monkeypatch.setenv("TROMPE_TEST_PLANTED_KIND", str(kind))
    out = tmp_path / "run"
    with pytest.raises(CommandExit) as stopped:
        main(["run", "--dataset", str(probe_dir), "--out", str(out), "--backend", "function", "--model",
              "planted_failures:yes_but_one_fails", "--no-tools", "--no-progress", "--concurrency", "1"])
    assert stopped.value.code == 1 and str(stopped.value).startswith(f"illusion-agent run: --out {out}: sample ")
    records = list(written(out).values())
    assert [SampleResult.from_json(r).failure for r in records if SampleResult.from_json(r).failed] == [kind]
    assert main(["report", str(out), "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert (totals["samples"], totals["answered"], totals["failed"], totals["failures"]) == (
        len(records), len(records) - 1, 1, {kind: 1})
    assert f"failures by kind {kind} 1" in page_text(out / "report" / "index.html")
    assert main(["score", str(out), "--output", str(tmp_path / "score.json")]) == 0
    counts = json.loads((tmp_path / "score.json").read_text())["counts"]
    assert (counts["records"], counts["failed"]) == (len(records), 1)
