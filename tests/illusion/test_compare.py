"""`compare` as a researcher reads it: samples pair on id and content, an exact McNemar test on the flips, paired
differences with intervals, a per-category chart, links from each flip to both runs' pages, and --json."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runlines import write_run
from trompe_agents.illusion.cli import main
from trompe_agents.illusion.compare import compare_runs
from trompe_agents.illusion.stats import mcnemar_exact, paired_difference, wilson
from trompe_agents.probes import generate

pytestmark = pytest.mark.usefixtures("scripted_on_path")


def run(dataset: Path, out: Path, model: str, *extra: str) -> None:
    assert main(["run", "--dataset", str(dataset), "--out", str(out), "--backend", "function", "--model",
                 f"scripted:{model}", "--no-progress", "--router", "regex", *extra]) == 0


def test_a_tools_ablation_prints_mcnemar_and_links_every_flip_to_both_runs(probe_dir, probes, tmp_path, capsys):
    tools, none = tmp_path / "tools", tmp_path / "none"
    run(probe_dir, tools, "line_then_yes")
    run(probe_dir, none, "answers_by_offer", "--no-tools")  # answers no without tools: every sample flips
    assert main(["report", str(tools)]) == 0
    capsys.readouterr()
    assert main(["compare", str(tools), str(none)]) == 0
    text = capsys.readouterr().out
    yes = sum(s.answer == "yes" for s in probes)
    no = len(probes) - yes
    p = mcnemar_exact(yes, no)  # right with tools only on yes-probes, without tools only on no-probes
    assert (f"exact McNemar test over 8 samples answered in both: right in A only {yes}, in B only {no}, "
            f"p = {p:.4g}") in text
    assert "the runs differ in: " in text and "no_tools (false -> true)" in text
    page = (none / "report" / "compare.html").read_text()
    flips = re.findall(r"<tr data-id='([^']+)'><td>[^<]+</td><td><a href='([^']+)'>[^<]+</a></td>"
                       r"<td><a href='([^']+)'>", page)
    assert sorted(f[0] for f in flips) == sorted(s.id for s in probes)
    html = none / "report" / "compare.html"
    for _, a_link, b_link in flips:
        assert (html.parent / a_link).resolve().is_file() and (html.parent / b_link).resolve().is_file()
        assert a_link.endswith(".html")  # A has a report: its sample page
        assert b_link.endswith("trace.jsonl")  # B has none: its trace
    bars = re.findall(r"<rect class='bar' data-run='([ab])' data-label='([^']+)' data-value='([0-9.]+)'", page)
    assert {label for _, label, _ in bars} == {s.category for s in probes}
    assert "class='axis-title x-title'" in page and "class='axis-title y-title'" in page

    assert main(["compare", str(tools), str(none), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mcnemar"] == {"pairs": 8, "a_only": yes, "b_only": no, "p": p}
    overall = data["groups"][0]
    assert overall["group"] == "all" and overall["paired"]["b_minus_a"] == pytest.approx((no - yes) / 8)
    low, high = overall["paired"]["ci95"]
    assert -1 <= low <= overall["paired"]["b_minus_a"] <= high <= 1
    saved = json.loads(html.with_suffix(".json").read_text())
    assert saved["mcnemar"] == data["mcnemar"]
    for written in (data, saved):  # each flip links to both runs' pages, as the HTML page does
        assert {f["id"]: (f["a_link"], f["b_link"]) for f in written["flips"]} == {i: (a, b) for i, a, b in flips}


def test_two_probe_seeds_never_pair(tmp_path, capsys):
    for seed in (0, 1):
        generate("illusions", families=["ebbinghaus", "hering"], n=4, seed=seed, size=96,
                 out=tmp_path / f"seed{seed}", progress=False)
        run(tmp_path / f"seed{seed}", tmp_path / f"run{seed}", "line_then_yes")
    with pytest.raises(SystemExit, match="share no samples: no sample id is in both; compare runs of the same"):
        main(["compare", str(tmp_path / "run0"), str(tmp_path / "run1")])


def answered_run(folder: Path, rows: list[dict]) -> Path:
    """A run folder whose rows the main agent answered."""
    return write_run(folder, [{"agent": "main", **r} for r in rows])


def test_same_ids_with_other_content_are_reported_and_never_paired(tmp_path):
    rows = [{"id": f"s{i}", "content": f"c{i}", "answer": "yes", "label": "yes", "correct": True}
            for i in range(4)]
    a = answered_run(tmp_path / "a", rows)
    b = answered_run(tmp_path / "b", [{**r, "content": "other"} if r["id"] in ("s0", "s1") else r for r in rows])
    comparison = compare_runs(a, b)
    assert comparison.overall.table == (2, 0, 0, 0)  # only s2, s3 pair
    assert comparison.mismatched == ["s0", "s1"]
    assert "not paired: 2 ids hold other images, question, options, answer type or label in the two runs (s0, s1)" in \
        comparison.text()
    many = answered_run(tmp_path / "many", [{**r, "id": f"s{i}"} for i, r in enumerate(rows * 2)])
    others = answered_run(tmp_path / "others", [{**r, "id": f"s{i}", "content": "other" if i < 6 else r["content"]}
                                                for i, r in enumerate(rows * 2)])
    assert ("not paired: 6 ids hold other images, question, options, answer type or label in the two runs "
            "(s0, s1, s2, s3, s4)") in compare_runs(many, others).text()  # the first five named
    c = answered_run(tmp_path / "c", [{**r, "content": "other"} for r in rows])
    with pytest.raises(ValueError, match="share no samples: all 4 ids they share hold other images"):
        compare_runs(a, c)


def test_newcombe_interval_matches_the_published_example():
    # Newcombe (1998), Statistics in Medicine 17:873-890, Table II example (a): 36, 12, 2, 0 -> method 10 gives
    # 0.0569 to 0.3404 for p1 - p2; here B - A, the same interval negated.
    diff, low, high = paired_difference(36, 12, 2, 0)
    assert diff == pytest.approx(-0.2)
    assert (round(low, 4), round(high, 4)) == (-0.3404, -0.0569)


def test_mcnemar_exact_values():
    assert mcnemar_exact(12, 2) == 212 / 2**14  # 2 * P(X <= 2), X ~ Binomial(14, 1/2)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(5, 0) == 2 / 32
    assert 0 < mcnemar_exact(3000, 3300) < 0.01  # thousands of flips, no underflow


@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 60))
def test_paired_difference_interval_holds_the_estimate_within_bounds(both, a_only, b_only, neither):
    if both + a_only + b_only + neither == 0:
        return
    diff, low, high = paired_difference(both, a_only, b_only, neither)
    assert -1 <= low <= diff + 1e-12 and diff - 1e-12 <= high <= 1
    assert math.isclose(diff, (b_only - a_only) / (both + a_only + b_only + neither), abs_tol=1e-12)
    assert mcnemar_exact(a_only, b_only) == mcnemar_exact(b_only, a_only)


def starts(line: str) -> list[int]:
    """Where each cell of a printed table line starts (cells are parted by two spaces or more)."""
    return [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", line)]


def test_the_printed_table_has_aligned_columns_and_says_when_nothing_flipped(tmp_path):
    rows = [{"id": f"s{i}", "content": f"c{i}", "answer": "yes", "label": "yes", "correct": True,
             "category": "cat"} for i in range(4)]
    a = answered_run(tmp_path / "a", rows)
    b = answered_run(tmp_path / "b", [{**r, "answer": "no", "correct": False} if r["id"] == "s0" else r
                                      for r in rows])
    lines = compare_runs(a, b).text().splitlines()
    header, overall, category = lines[:3]
    assert re.split(r"\s{2,}", header) == ["grouping", "group", str(a), str(b), "B - A [95% CI] over pairs"]
    assert re.split(r"\s{2,}", overall) == ["all", "all", "100.0% [51.0%–100.0%] n=4 failed 0",
                                            "75.0% [30.1%–95.4%] n=4 failed 0", "-25.0 pt [-69.9, +28.1] n=4"]
    assert re.split(r"\s{2,}", category)[:2] == ["category", "cat"]
    assert starts(overall) == starts(category) == starts(header)  # each column under its heading
    assert all(line == line.rstrip() for line in lines)
    assert lines[-2:] == ["1 samples changed outcome:", "  s0: right -> wrong"]
    assert compare_runs(a, a).text().splitlines()[-1] == "0 samples changed outcome"  # no list follows


def test_the_chart_bars_are_each_runs_category_accuracy_and_a_run_with_none_answered_has_no_bar(tmp_path):
    rows = [{"id": f"s{i}", "content": f"c{i}", "answer": "yes", "label": "yes", "correct": True,
             "category": "cat" if i < 4 else "dog"} for i in range(6)]
    failed = {"answer": None, "correct": None, "error": "boom", "error_kind": "server"}
    a = answered_run(tmp_path / "a", rows)
    b = answered_run(tmp_path / "b", [{**r, "answer": "no", "correct": False} if r["id"] == "s0" else
                                      {**r, **failed} if r["category"] == "dog" else r for r in rows])
    bars = re.findall(r"<rect class='bar' data-run='([ab])' data-label='([^']+)' data-value='([0-9.]+)'",
                      compare_runs(a, b).chart())
    assert [(run, label, float(value)) for run, label, value in bars] == [
        ("a", "cat", 1.0), ("b", "cat", 0.75), ("a", "dog", 1.0)]  # B answered no dog: no bar, not 0


def legend(svg: str) -> list[str]:
    """The chart legend's entries, as the SVG names each run."""
    return re.findall(r"font-size='11'>([^<]*)</text>", re.search(r"<g class='legend'>(.*?)</g>", svg).group(1))


def test_the_legend_names_each_runs_model_and_tools_and_the_note_states_compare_jsons_p(tmp_path):
    """What compare.html's chart calls each run (its model; "with/no tools" when only one ran without; the folder
    when both are the same model) and the McNemar note it draws, to compare.json's p."""
    rows = [{"id": f"s{i}", "content": f"c{i}", "answer": "yes", "label": "yes", "correct": True} for i in range(6)]
    flipped = [{**r, "answer": "no", "correct": False} if r["id"] in ("s0", "s1", "s2") else r for r in rows]
    tools = write_run(tmp_path / "tools", [{"agent": "main", **r} for r in rows], model="m-1")
    none = write_run(tmp_path / "none", [{"agent": "main", **r} for r in flipped], model="m-2", no_tools=True)
    html = tmp_path / "cmp" / "compare.html"
    assert main(["compare", str(tools), str(none), "--html", str(html)]) == 0
    svg, data = (html.parent / "compare-categories.svg").read_text(), json.loads(html.with_suffix(".json").read_text())
    assert legend(svg) == ["A: m-1, with tools", "B: m-2, no tools"]
    assert data["mcnemar"] == {"pairs": 6, "a_only": 3, "b_only": 0, "p": 0.25}  # 2 * (1/2)^3
    assert re.search(r"data-p='([^']+)'", svg).group(1) == repr(data["mcnemar"]["p"])
    assert "exact McNemar test over 6 pairs: p = 0.25 (right in A only 3, in B only 0)" in svg
    both = write_run(tmp_path / "again", [{"agent": "main", **r} for r in flipped], model="m-1")
    assert compare_runs(tools, both).models() == (f"A: m-1 ({tools})", f"B: m-1 ({both})")
    assert compare_runs(tools, none).models() == ("A: m-1, with tools", "B: m-2, no tools")
    assert compare_runs(none, tools).models() == ("A: m-2, no tools", "B: m-1, with tools")
    folders = write_run(tmp_path / "unnamed", [{"agent": "main", **r} for r in rows])  # run.json names no model
    assert compare_runs(folders, both).models() == ("A: unnamed", "B: m-1")


def test_compare_json_names_both_runs_what_differs_and_a_group_with_no_pair_has_no_difference(tmp_path, capsys):
    """compare.json as another tool reads it: the harness and version, each run's folder, model, backend, run key
    and trompe version, the settings that differ, ids not paired, pairs joined on id alone; a group no pair was
    scored in has no difference; written indented, into a folder made for it."""
    from trompe_kernel.version import __version__

    rows = [{"id": f"s{i}", "content": f"c{i}", "answer": "yes", "label": "yes", "correct": True,
             "category": "cat" if i < 4 else "dog"} for i in range(6)]
    failed = {"answer": None, "correct": None, "error": "boom", "error_kind": "server"}
    a = write_run(tmp_path / "a", [{"agent": "main", **r} for r in rows], model="m-1", backend="openai",
                  run_key="k-a", trompe="0.1.0", fingerprint={"model": "m-1", "tools": ["crop"]})
    b_rows = [{**r, **failed} if r["category"] == "dog" else {**r, "content": "other"} if r["id"] == "s0" else r
              for r in rows]
    b_rows[1] = {k: v for k, v in b_rows[1].items() if k != "content"}  # a line written before content hashes
    b = write_run(tmp_path / "b", [{"agent": "main", **r} for r in b_rows], model="m-2", backend="anthropic",
                  run_key="k-b", trompe="0.2.0", fingerprint={"model": "m-2", "tools": ["crop", "zoom"]})
    html = tmp_path / "new" / "deeper" / "compare.html"
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--json", "--html", str(html)]) == 0
    printed, written = json.loads(capsys.readouterr().out), html.with_suffix(".json").read_text()
    assert written == json.dumps(json.loads(written), indent=2) + "\n"  # one key a line: readable in a diff
    data = json.loads(written)
    assert data == printed
    assert data["harness"] == {"name": "trompe illusion-agent", "version": __version__}
    assert data["runs"] == {
        "a": {"folder": str(a), "model": "m-1", "backend": "openai", "run_key": "k-a", "trompe": "0.1.0"},
        "b": {"folder": str(b), "model": "m-2", "backend": "anthropic", "run_key": "k-b", "trompe": "0.2.0"}}
    assert data["differences"] == ["model (m-1 -> m-2)", "tools (+zoom)"]
    notes = re.search(r"<ul class='notes'>(.*?)</ul>", html.read_text()).group(1)
    assert re.findall(r"<li>(.*?)</li>", notes)[1:] == [
        "the runs differ in: model (m-1 -&gt; m-2); tools (+zoom)",
        "not paired: 1 ids hold other images, question, options, answer type or label in the two runs (s0)",
        "1 pairs joined on id alone (lines written before content hashes)"]
    assert notes == "".join(f"<li>{note}</li>" for note in re.findall(r"<li>(.*?)</li>", notes))
    assert data["mismatched"] == ["s0"] and data["unverified_pairs"] == 1
    dog = next(g for g in data["groups"] if g["group"] == "dog")
    assert dog["paired"] == {"pairs": 0, "both_right": 0, "a_only": 0, "b_only": 0, "neither": 0,
                             "b_minus_a": None, "ci95": None}
    assert dog["b"] == {"right": 0, "scored": 0, "accuracy": None, "ci95": None, "failed": 2}


def test_compare_html_holds_the_table_the_notes_and_a_link_to_each_flips_trace_where_it_is(tmp_path):
    """compare.html as a person reads it: title, both runs, the McNemar note, the explanation, the table of each
    group, and each flip linked to the trace each run recorded for it (where the record says, else
    traces/<id with unsafe characters replaced>), plain text where a run has none."""
    ids = ["s0", "s1", "s2", "q/3"]
    rows = [{"id": i, "content": f"c{i}", "answer": "yes", "label": "yes", "correct": True, "category": "cat"}
            for i in ids]
    rows[1] = {**rows[1], "answer": "no", "correct": False}
    b_rows = [{**r, "answer": "no", "correct": False} if r["id"] in ("s0", "q/3") else r for r in rows]
    b_rows[0]["trace"] = "traces/elsewhere"
    b_rows[1] = {**b_rows[1], "answer": "yes", "correct": True}
    a = answered_run(tmp_path / "a", rows)
    b = answered_run(tmp_path / "b", b_rows)
    for trace in (a / "traces" / "s0", a / "traces" / "q_3", b / "traces" / "elsewhere"):
        trace.mkdir(parents=True)
        (trace / "trace.jsonl").write_text("{}\n")
    html = tmp_path / "cmp" / "compare.html"
    assert main(["compare", str(a), str(b), "--html", str(html)]) == 0
    text = html.read_text()
    comparison = compare_runs(a, b)
    assert "<title>Run comparison</title>" in text
    assert f"<h1>A: {a}<br>B: {b}</h1>" in text
    assert ("<ul class='notes'><li>exact McNemar test over 4 samples answered in both: right in A only 2, in B "
            "only 1, p = 1</li></ul>") in text
    assert ("<p>Accuracy over answered samples [95% Wilson interval]; failures counted apart. B - A is over the "
            "samples answered and labelled in both runs, with Newcombe's interval for paired proportions.</p>") in text
    assert comparison.rows[0].cells()[2] == "75.0% [30.1%–95.4%] n=4 failed 0"  # A: 3 of 4
    assert [row.cells()[:2] for row in comparison.rows] == [["all", "all"], ["category", "cat"]]
    table = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row.cells()) + "</tr>" for row in comparison.rows)
    assert (f"<table class='compare'><tr><th>grouping</th><th>group</th><th>{a}</th><th>{b}</th>"
            f"<th>B - A [95% CI]</th></tr>{table}</table>") in text
    assert ("<h2>Samples that changed outcome (3)</h2><p>Each outcome links to that run's page for the sample (its "
            "trace when the run has no report).</p>") in text
    assert ("<table class='flips'><tr><th>sample</th><th>A</th><th>B</th></tr>"
            "<tr data-id='s0'><td>s0</td><td><a href='../a/traces/s0/trace.jsonl'>right</a></td>"
            "<td><a href='../b/traces/elsewhere/trace.jsonl'>wrong</a></td></tr>"
            "<tr data-id='s1'><td>s1</td><td>wrong</td><td>right</td></tr>"
            "<tr data-id='q/3'><td>q/3</td><td><a href='../a/traces/q_3/trace.jsonl'>right</a></td>"
            "<td>wrong</td></tr></table>") in text


def test_the_chart_of_runs_without_categories_is_one_row_with_each_runs_wilson_whiskers_and_count(tmp_path):
    """No category: the chart shows the overall row only (not a family's); each bar's whisker spans its run's
    95% Wilson interval on the 0-100% axis, its tooltip gives the count; titles name what is drawn."""
    rows = [{"id": f"s{i}", "content": f"c{i}", "answer": "yes", "label": "yes", "correct": True,
             "family": "ebbinghaus"} for i in range(5)]
    a = answered_run(tmp_path / "a", rows)
    b = answered_run(tmp_path / "b", [{**r, "answer": "no", "correct": False} if r["id"] in ("s0", "s1") else r
                                      for r in rows])
    svg = compare_runs(a, b).chart()
    assert svg.startswith("<svg id='compare-categories' ")
    assert "<title>Accuracy per category</title>" in svg
    assert re.findall(r"class='axis-title [xy]-title'[^>]*>([^<]*)<", svg) == [
        "accuracy over answered samples (%), whiskers: 95% Wilson interval", "dataset category"]
    assert re.findall(r"<text x='[\d.]+' y='[\d.]+' text-anchor='end' font-size='12'>([^<]*)</text>", svg) == ["all"]
    ticks = {label: float(x) for x, label in re.findall(r"class='x-tick' x='([\d.]+)'[^>]*>([^<]*)<", svg)}
    left, right = ticks["0%"], ticks["100%"]
    spans = [(float(x1), float(x2)) for x1, x2 in
             re.findall(r"<g class='whisker'><line x1='([\d.]+)' y1='[\d.]+' x2='([\d.]+)'", svg)]
    assert spans == [pytest.approx((left + low * (right - left), left + high * (right - left)), abs=0.06)
                     for low, high in (wilson(5, 5), wilson(3, 5))]
    assert re.findall(r"<title>([AB]: [^<]*)</title></rect>", svg) == ["A: a: 100% (n=5)", "B: b: 60% (n=5)"]



def test_an_unlabelled_sample_that_failed_in_one_run_flips_from_answered(tmp_path):
    """Without a label an answer is neither right nor wrong: the flip list says 'answered'."""
    rows = [{"id": "u0", "content": "c0", "answer": "maybe", "label": None, "correct": None},
            {"id": "s1", "content": "c1", "answer": "yes", "label": "yes", "correct": True}]
    a = answered_run(tmp_path / "a", rows)
    b = answered_run(tmp_path / "b", [{**rows[0], "answer": None, "error": "boom", "error_kind": "server"}, rows[1]])
    assert compare_runs(a, b).flips == [("u0", "answered", "failed (server)")]
