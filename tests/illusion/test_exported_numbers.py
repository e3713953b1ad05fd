"""Every number `report --json` (summary.json), samples.csv and `compare --json` (compare.json) write, checked
against a hand count from the dataset's own labels and textbook statistics (tests/handstats.py): on a real run of
eight probes through `illusion-agent run` (one sample failing), at its edges (one sample, two, every one failed),
with token counts, prices and service tiers the run's records carry (one unpriced), and on a hand-made pair of runs."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from handstats import mcnemar_p, newcombe, stderr_n_minus_1, wilson
from .planted_failures import PLANTED_IN
from runlines import as_lines
from .test_compare import write_run
from trompe_agents.failures import ErrorKind
from trompe_agents.illusion.export import samples_csv, summary, write_exports
from trompe_agents.illusion.results import read_results
from trompe_agents.illusion.cli import main
from trompe_agents.messages import Usage
from trompe_agents.records import SampleResult
from trompe_agents.runfolder import RunFolder

pytestmark = pytest.mark.usefixtures("scripted_on_path")
TASK = "jsonl_task1"


def run_and_report(probe_dir: Path, out: Path, capsys, model: str, *extra: str, failures: bool = False) -> dict:
    """`run` (exit 3 when a sample failed), then `report --json`, whose stdout is what summary.json holds."""
    assert main(["run", "--dataset", str(probe_dir), "--out", str(out), "--backend", "function", "--model", model,
                 "--no-progress", "--router", "regex", *extra]) == (3 if failures else 0)
    return report(out, capsys)


def report(out: Path, capsys) -> dict:
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert json.loads((out / "report" / "summary.json").read_text()) == data
    return data


def proportion(right: int, n: int) -> dict:
    """right/scored/accuracy/ci95 as a hand count says they are."""
    return {"right": right, "scored": n, "accuracy": right / n if n else None,
            "ci95": pytest.approx(list(wilson(right, n)), abs=1e-12) if n else None}


def hand_count(probes, fails) -> dict:
    """Per probe id: 'failed', True (right) or False, for a model answering yes to all but `fails`."""
    return {p.id: "failed" if fails(p) else p.answer == "yes" for p in probes}


def expected_groups(probes, outcome: dict) -> dict:
    keys = {"category": lambda p: p.category, "family": lambda p: p.metadata["family"],
            "stimulus": lambda p: "counterfactual" if p.metadata["counterfactual"] else "genuine"}
    groups = {}
    for grouping, key in keys.items():
        table = {}
        for name in sorted({key(p) for p in probes}):
            members = [outcome[p.id] for p in probes if key(p) == name]
            answered = [o for o in members if o != "failed"]
            table[name] = {"n": len(members), "failed": len(members) - len(answered),
                           **proportion(sum(answered), len(answered))}
        groups[grouping] = table
    return groups


def test_summary_numbers_equal_a_hand_count_of_a_real_run_with_one_failure(probe_dir, probes, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.setenv("TROMPE_TEST_PLANTED_KIND", "server")
    out = tmp_path / "run"
    data = run_and_report(probe_dir, out, capsys, "planted_failures:yes_but_one_fails", failures=True)
    outcome = hand_count(probes, lambda p: PLANTED_IN in p.question)
    answered = [o for o in outcome.values() if o != "failed"]
    right, n = sum(answered), len(answered)
    assert (n, len(probes)) == (7, 8)
    totals = data["totals"]
    assert {k: totals[k] for k in ("samples", "answered", "failed", "failures")} == \
        {"samples": 8, "answered": 7, "failed": 1, "failures": {"server": 1}}
    assert {k: totals[k] for k in ("right", "scored", "accuracy", "ci95")} == proportion(right, n)
    assert totals["accuracy_failures_as_wrong"] == right / 8
    assert (totals["tokens"], totals["service_tiers"]) == (0, ["standard"])  # the function backend bills nothing
    assert totals["cost_usd"] == 0.0 and isinstance(totals["cost_usd"], float)  # nothing billed: $0.0, never 0
    assert data["groups"] == expected_groups(probes, outcome)
    meta = json.loads((out / "run.json").read_text())  # the run block names the run as run.json does
    assert data["run"] == {"folder": str(out), "created": meta["created"], "task": 1, "backend": "function",
                           "model": "planted_failures:yes_but_one_fails", "dataset": meta["dataset"],
                           "format": "jsonl", "run_key": meta["run_key"], "trompe": meta["trompe"],
                           "fingerprint": meta["fingerprint"]}
    assert meta["created"] and meta["run_key"] and meta["trompe"] and meta["dataset"] == str(probe_dir)
    assert data["files"] == {"csv": "report/samples.csv", "html": "report/index.html", "json": "report/summary.json"}
    assert all((out / path).is_file() for path in data["files"].values())
    written = (out / "report" / "summary.json").read_text(encoding="utf-8")
    assert written == json.dumps(data, indent=2, ensure_ascii=False) + "\n"  # one key a line, as it reads

    # lmms-eval counts the failure as a wrong reply: every labelled sample, n - 1 in the standard error
    categories = {p.category for p in probes}
    per_category = [sum(outcome[p.id] is True for p in probes if p.category == c) /
                    sum(p.category == c for p in probes) for c in categories]
    results = data["lmms_eval"]["results"][TASK]
    assert results == {"alias": TASK, "mean_over_categories,none": pytest.approx(sum(per_category) / len(categories)),
                       "accuracy,none": right / 8,
                       "accuracy_stderr,none": pytest.approx(stderr_n_minus_1(right, 8), rel=1e-12)}
    assert data["lmms_eval"]["n-samples"][TASK] == {"original": 8, "effective": 8}
    assert data["lmms_eval"]["higher_is_better"] == {TASK: {"mean_over_categories": True, "accuracy": True}}
    assert data["lmms_eval"]["config"] == {
        "model": "function", "model_args": "model=planted_failures:yes_but_one_fails", "limit": None,
        "scorer": "official", "harness": "trompe illusion-agent", "harness_version": data["harness"]["version"]}
    assert data["benchmark"]["headline"]["accuracy"] == right / 8
    assert (data["benchmark"]["scored"], data["benchmark"]["failed"], data["benchmark"]["unscored"]) == (8, 1, 0)

    rows = list(csv.DictReader((out / "report" / "samples.csv").open()))
    assert [r["id"] for r in rows] == [p.id for p in probes]
    for row, probe in zip(rows, probes):
        failed = outcome[probe.id] == "failed"
        assert row == {"id": probe.id, "category": probe.category, "family": probe.metadata["family"],
                       "answer": "" if failed else "yes", "gold": probe.answer,
                       "correct": "" if failed else str(outcome[probe.id]), "error_kind": "server" if failed else "",
                       "rounds": "1", "tools_used": "", "tokens": "0", "cost": "",
                       "magnitude": str(float(probe.metadata["magnitude"])),
                       "magnitude_unit": probe.metadata["magnitude_unit"] or "",
                       "counterfactual": str(probe.metadata["counterfactual"])}


def billed(out: Path, price: dict[str, float | None], tiers: dict[str, str]) -> dict[str, Usage]:
    """Give each record of a run the usage, price and tier a vendor run would record (appended as the runner
    appends a newer line for a sample), returning each sample's usage."""
    usages = {}
    lines = []
    for i, (sample_id, record) in enumerate(sorted(read_results(out).items())):
        usage = Usage(input_tokens=1000 + 37 * i, output_tokens=50 + i, reasoning_tokens=3 * i, cached_tokens=i)
        usages[sample_id] = usage
        cost = price[sample_id]
        lines.append(replace(record, usage=usage, cost=cost, service_tier=tiers[sample_id],
                             roles={"main": {**asdict(usage), "cost": cost}}))
    with (out / "results.jsonl").open("a") as results:
        results.writelines(json.dumps(line) + "\n" for line in as_lines({r.id: r for r in lines}).values())
    return usages


def test_tokens_cost_and_tiers_add_up_and_one_unpriced_record_makes_the_cost_unknown(probe_dir, probes, tmp_path,
                                                                                      capsys):
    out = tmp_path / "run"
    run_and_report(probe_dir, out, capsys, "scripted:line_then_yes", "--limit", "4")
    ids = [p.id for p in probes[:4]]
    price = {sample_id: 0.0001 * (k + 1) + 1e-7 for k, sample_id in enumerate(ids)}
    tiers = dict(zip(ids, ["standard", "flex", "priority", "flex"]))
    usages = billed(out, price, tiers)
    data = report(out, capsys)
    totals = data["totals"]
    assert totals["tokens"] == sum(u.input_tokens + u.output_tokens + u.reasoning_tokens for u in usages.values())
    assert totals["cost_usd"] == pytest.approx(round(sum(price.values()), 6), abs=1e-12)
    assert totals["service_tiers"] == ["flex", "priority", "standard"]
    main_role = totals["roles"]["main"]
    assert main_role["samples"] == 4 and main_role["cost"] == pytest.approx(totals["cost_usd"], abs=1e-12)
    for field in ("input_tokens", "output_tokens", "reasoning_tokens", "cached_tokens"):
        assert main_role[field] == sum(getattr(u, field) for u in usages.values()), field
    rows = {r["id"]: r for r in csv.DictReader((out / "report" / "samples.csv").open())}
    for sample_id, usage in usages.items():
        assert int(rows[sample_id]["tokens"]) == usage.input_tokens + usage.output_tokens + usage.reasoning_tokens
        assert float(rows[sample_id]["cost"]) == pytest.approx(price[sample_id], rel=1e-12)

    billed(out, {**price, ids[2]: None}, tiers)  # one model without a price: the total is unknown, not a sum
    totals = report(out, capsys)["totals"]
    assert totals["cost_usd"] is None and totals["roles"]["main"]["cost"] is None
    assert {r["id"]: r["cost"] for r in csv.DictReader((out / "report" / "samples.csv").open())}[ids[2]] == ""


@pytest.mark.parametrize("limit", [1, 2])
def test_one_and_two_samples(probe_dir, probes, tmp_path, capsys, limit):
    """1 of 1, and 1 of 2 (the first two probes are labelled yes, no): lmms-eval's stderr is None at n=1 and
    sqrt(p(1-p)/(n-1)) = 0.5 at 1 of 2, where n in place of n - 1 would give 0.354."""
    data = run_and_report(probe_dir, tmp_path / "run", capsys, "scripted:line_then_yes", "--limit", str(limit))
    assert [p.answer for p in probes[:2]] == ["yes", "no"]
    right = 1
    totals = data["totals"]
    assert {k: totals[k] for k in ("right", "scored", "accuracy", "ci95")} == proportion(right, limit)
    assert totals["accuracy_failures_as_wrong"] == right / limit
    results = data["lmms_eval"]["results"][TASK]
    assert results["accuracy,none"] == right / limit
    assert results["accuracy_stderr,none"] == (None if limit == 1 else 0.5)
    assert data["lmms_eval"]["n-samples"][TASK] == {"original": limit, "effective": limit}


def test_every_sample_failed(probe_dir, probes, tmp_path, capsys):
    """Nothing answered: no accuracy over answered samples (and no interval), 0 counting failures as wrong."""
    data = run_and_report(probe_dir, tmp_path / "run", capsys, "scripted:never_valid", "--limit", "3",
                          "--max-rounds", "1", "--rescue-rounds", "1", failures=True)
    totals = data["totals"]
    assert (totals["samples"], totals["answered"], totals["failed"]) == (3, 0, 3)
    assert {k: totals[k] for k in ("right", "scored", "accuracy", "ci95")} == proportion(0, 0)
    assert totals["accuracy_failures_as_wrong"] == 0.0
    results = data["lmms_eval"]["results"][TASK]
    assert results["accuracy,none"] == 0.0 and results["accuracy_stderr,none"] == stderr_n_minus_1(0, 3) == 0.0
    assert data["lmms_eval"]["n-samples"][TASK] == {"original": 3, "effective": 3}
    assert all(group["accuracy"] is None and group["ci95"] is None
               for table in data["groups"].values() for group in table.values())


def answered(sample_id: str, category: str, right: bool) -> SampleResult:
    return SampleResult.of_sample(sample_id, label="yes", category=category, content=f"c-{sample_id}").with_answer(
        "yes" if right else "no", "main", right)


def test_compare_json_numbers_equal_a_hand_count_of_a_paired_table(tmp_path, capsys):
    """Ten paired samples in two categories, one failed in B: the paired table over the nine scored in both,
    McNemar's exact p and Newcombe's interval, per group and overall."""
    # (A right, B right) per sample; s9 fails in B
    plan = {"s0": (1, 1), "s1": (1, 1), "s2": (1, 0), "s3": (1, 0), "s4": (1, 0), "s5": (1, 0), "s6": (0, 1),
            "s7": (0, 0), "s8": (0, 0), "s9": (1, None)}
    category = {s: "near" if int(s[1]) < 5 else "far" for s in plan}
    a = {s: answered(s, category[s], bool(ra)) for s, (ra, _) in plan.items()}
    b = {s: answered(s, category[s], bool(rb)) if rb is not None else
         SampleResult.of_sample(s, label="yes", category=category[s], content=f"c-{s}").with_failure("timeout", "t")
         for s, (_, rb) in plan.items()}
    run_a = write_run(tmp_path / "a", list(as_lines(a).values()))
    run_b = write_run(tmp_path / "b", list(as_lines(b).values()))
    html = tmp_path / "cmp" / "compare.html"
    capsys.readouterr()
    assert main(["compare", str(run_a), str(run_b), "--json", "--html", str(html)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert json.loads(html.with_suffix(".json").read_text())["groups"] == data["groups"]

    def expected(ids: list[str]) -> dict:
        pairs = [plan[s] for s in ids if plan[s][1] is not None]
        table = [sum(p == cell for p in pairs) for cell in ((1, 1), (1, 0), (0, 1), (0, 0))]
        diff, low, high = newcombe(*table)
        return {"a": {**proportion(sum(plan[s][0] for s in ids), len(ids)), "failed": 0},
                "b": {**proportion(sum(p[1] for p in pairs), len(pairs)), "failed": len(ids) - len(pairs)},
                "paired": {"pairs": len(pairs), "both_right": table[0], "a_only": table[1], "b_only": table[2],
                           "neither": table[3], "b_minus_a": pytest.approx(diff, abs=1e-12),
                           "ci95": pytest.approx([low, high], abs=1e-12)}}

    groups = {(g["grouping"], g["group"]): {k: g[k] for k in ("a", "b", "paired")} for g in data["groups"]}
    assert groups == {("all", "all"): expected(list(plan)),
                      ("category", "far"): expected([s for s in plan if category[s] == "far"]),
                      ("category", "near"): expected([s for s in plan if category[s] == "near"])}
    assert groups["all", "all"]["paired"]["pairs"] == 9
    assert data["mcnemar"] == {"pairs": 9, "a_only": 4, "b_only": 1, "p": pytest.approx(mcnemar_p(4, 1))}
    assert mcnemar_p(4, 1) == pytest.approx(12 / 32)  # 2 * P(X <= 1), X ~ Binomial(5, 1/2)
    assert {f["id"]: (f["a"], f["b"]) for f in data["flips"]} == {
        **{s: ("right", "wrong") for s in ("s2", "s3", "s4", "s5")}, "s6": ("wrong", "right"),
        "s9": ("right", "failed (timeout)")}


def test_csv_lines_cells_and_tools_and_the_summary_s_defaults():
    """samples.csv: one line per record ending in \\n alone, blank cells where there is nothing, each tool once in
    first-use order joined by ';'. summary.json: a priced record that cost 0.0 adds nothing, a record without a
    tier counts as "standard", a run of no named format is filed as dataset_task1, and without a folder the run
    block's folder is null."""
    free = SampleResult.of_sample("a", label="yes", category="c").with_answer(
        "yes", "main", True, tool_calls=["crop", "draw_line", "crop"], usage=Usage(input_tokens=10, output_tokens=2),
        cost=0.0)
    failed = SampleResult.of_sample("b", label="yes", category="c").with_failure(ErrorKind.RUN, "boom", cost=0.0)
    text = samples_csv([free, failed])
    assert "\r" not in text and text.endswith("\n") and len(text.split("\n")) == 4  # header, two rows, end
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["tools_used"] == "crop;draw_line" and rows[0]["cost"] == "0.0"
    assert (rows[1]["answer"], rows[1]["correct"], rows[1]["tools_used"]) == ("", "", "")
    data = summary({"task": 1}, [free, failed])
    assert data["totals"]["cost_usd"] == 0.0 and data["totals"]["tokens"] == 12
    assert data["totals"]["service_tiers"] == ["standard"]
    assert list(data["lmms_eval"]["results"]) == ["dataset_task1"]
    assert data["run"]["folder"] is None


def test_the_summary_scores_with_the_run_s_format_and_the_scorer_asked_for():
    """A HallusionBench run's summary holds the named harness's numbers: lmms-eval's image split leaves the
    question without a figure out (1 of 1 right), the official rules keep it (1 of 2)."""
    keys = {"category": "VS", "subcategory": "chart", "set_id": "0", "question_id": "0"}
    shown = SampleResult.of_sample("s", label="yes", keys={**keys, "visual_input": "1", "figure_id": "1"}).with_answer(
        "yes", "main", True)
    blind = SampleResult.of_sample("t", label="yes", keys={**keys, "visual_input": "0", "figure_id": "0"}).with_answer(
        "no", "main", False)
    meta = {"task": 1, "format": "hallusionbench"}
    assert summary(meta, [shown, blind], "lmms-eval")["benchmark"]["headline"]["aAcc"] == 1.0
    assert summary(meta, [shown, blind])["benchmark"]["headline"]["aAcc"] == 0.5


def test_summary_json_keeps_non_ascii_names_as_written(tmp_path):
    """A category such as "Müller-Lyer" is written as UTF-8 text in summary.json, not as \\u escapes."""
    record = SampleResult.of_sample("m", label="yes", category="Müller-Lyer").with_answer("yes", "main", True)
    write_exports(RunFolder(tmp_path), [record], summary({"task": 1}, [record]))
    text = (tmp_path / "summary.json").read_text(encoding="utf-8")
    assert '"Müller-Lyer"' in text and "\\u00fc" not in text
    assert json.loads(text)["groups"]["category"]["Müller-Lyer"]["right"] == 1
