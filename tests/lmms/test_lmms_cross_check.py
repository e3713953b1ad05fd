"""The same scripted model on the same BlindTest and BLINK items, two ways: `lmms-eval --model trompe` (lmms-eval's own
task files, prompts and scoring) and `illusion-agent run` + `score --scorer lmms-eval` (trompe's re-implementation).
Every item gets the same verdict and the headline numbers agree; a failed item is an empty reply, wrong in both.
Offline: local parquet copies of the datasets (lmmskit.py), HF_HUB_OFFLINE and HF_DATASETS_OFFLINE set.
"""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("lmms_eval", reason="the lmms-eval extra is not installed (pip install 'trompe[lmms-eval]')")

import lmmskit  # noqa: E402
from trompe_agents.datasets.blindtest import lmms_blindtest_right  # noqa: E402
from trompe_agents.datasets.blink import lmms_blink_right  # noqa: E402
from trompe_agents.illusion.cli import main as illusion_agent  # noqa: E402
from trompe_agents.illusion.rescore import score_run  # noqa: E402
from trompe_agents.illusion.results import read_results  # noqa: E402

pytestmark = pytest.mark.slow  # lmms-eval in a subprocess: about a minute on two cores
MODEL = ["--backend", "function", "--model", "lmms_scripted:answer", "--tools", "core,analysis", "--max-rounds", "3"]
MODEL_ARGS = "backend=function,model=lmms_scripted:answer,router=regex,tools=core,analysis,max_rounds=3"
ITEM = re.compile(r"\[item (\d+)\]")


def item(text: str) -> int:
    return int(ITEM.search(text).group(1))


@pytest.fixture(scope="module")
def lmms_run(tmp_path_factory):
    """One lmms-eval run over both tasks: its results file, samples logs and trompe's trace folder."""
    tmp = tmp_path_factory.mktemp("lmms")
    tasks = lmmskit.write_tasks(tmp / "tasks")
    done = lmmskit.run_lmms_eval(tmp, "trompe_check_blindtest,trompe_check_blink", MODEL_ARGS, tasks, tmp / "out")
    assert done.returncode == 0 and "Error during evaluation" not in done.stdout + done.stderr, done.stderr[-3000:]
    results, samples = lmmskit.results(tmp / "out")
    [traces] = (tmp / "out").rglob("summary.json")
    return tmp, results, samples, traces.parent, done


@pytest.fixture(scope="module")
def trompe_runs(lmms_run, monkeypatch_module):
    """`illusion-agent run` over the same files with the same model, each run folder beside them."""
    tmp = lmms_run[0]
    monkeypatch_module.syspath_prepend(str(lmmskit.HERE))
    runs = {}
    for name, dataset in (("blindtest", tmp / "tasks" / "blindtest.parquet"), ("blink", tmp / "tasks" / "blink")):
        runs[name] = tmp / f"run_{name}"
        status = illusion_agent([*MODEL, "run", "--dataset", str(dataset), "--format", name, "--out",
                                 str(runs[name]), "--images-root", str(tmp / f"img_{name}"), "--router", "regex",
                                 "--no-progress"])
        assert status == 3  # some samples have no answer: the scripted failures
    return runs


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_every_blindtest_item_gets_the_same_verdict_and_the_same_headline(lmms_run, trompe_runs):
    _, results, samples, _, _ = lmms_run
    lmms = {item(s["input"]): s["accuracy"] == 1.0 for s in samples["trompe_check_blindtest"]}
    trompe = {item(r.question): lmms_blindtest_right(r) for r in read_results(trompe_runs["blindtest"]).values()}
    assert lmms == trompe and len(lmms) == len(lmmskit.BLINDTEST)
    assert sum(lmms.values()) == 7  # items 0, 1, 2, 3, 5, 6, 10 (lmmskit.BLINDTEST)
    figures = score_run(trompe_runs["blindtest"], "lmms-eval")["metric"]
    by_task = results["results"]["trompe_check_blindtest"]["accuracy_by_task,none"]
    assert figures["accuracy"] == pytest.approx(results["results"]["trompe_check_blindtest"]["accuracy,none"])
    # Subway Connections has no right answer: lmms-eval 0.7.3 still counts it in the mean (7/12 right, 4.5/8)
    assert figures["task_mean"] == pytest.approx(by_task["task_mean"]) == pytest.approx(4.5 / 8)


def test_every_blink_item_gets_the_same_verdict_and_the_same_headline(lmms_run, trompe_runs):
    _, results, samples, _, _ = lmms_run
    lmms = {item(s["input"]): s["blink_acc"]["is_correct"] for task, lines in samples.items() if "blink" in task
            for s in lines}
    trompe = {item(r.question): lmms_blink_right(r) for r in read_results(trompe_runs["blink"]).values()}
    assert lmms == trompe and len(lmms) == len(lmmskit.BLINK)
    figures = score_run(trompe_runs["blink"], "lmms-eval")["metric"]
    assert figures["blink_acc"] == pytest.approx(results["results"]["trompe_check_blink"]["blink_acc,none"])
    assert figures["blink_acc"] == pytest.approx((2 / 4 + 3 / 4) / 2)


def test_a_failed_request_is_an_empty_reply_listed_in_the_summary_never_an_answer(lmms_run):
    _, _, samples, traces, done = lmms_run
    summary = json.loads((traces / "summary.json").read_text())
    failed = {(f["task"], f["doc_id"]) for f in summary["failures"]}
    assert failed == {("trompe_check_blindtest", 9), ("trompe_check_blink_relative_depth", 3)}
    assert summary["requests"] == 20 and summary["answered"] == 18
    assert {f["error_kind"] for f in summary["failures"]} == {"invalid_answer"}
    replies = {(task, s["doc_id"]): s["filtered_resps"] for task, lines in samples.items() for s in lines}
    assert all(replies[key] == "" for key in failed)
    assert "20 requests, 18 answered, 2 failed (invalid_answer: 2)" in done.stderr
    # each request keeps its trace and input images beside lmms-eval's logs
    assert traces.parent == next((traces.parent.parent).rglob("*_results.json")).parent
    trace = traces / "trompe_check_blindtest" / "0"
    assert (trace / "trace.jsonl").is_file() and (trace / "inputs" / "image_1.png").is_file()


def test_compare_reads_two_lmms_eval_samples_logs_with_and_without_tools(lmms_run, tmp_path, capsys):
    """`illusion-agent compare` on lmms-eval's own samples logs: the tools run against its `tools=none` baseline."""
    tmp, _, samples, _, _ = lmms_run
    baseline = lmmskit.run_lmms_eval(tmp_path, "trompe_check_blindtest", MODEL_ARGS.replace(
        "tools=core,analysis", "tools=none"), tmp / "tasks", tmp_path / "out")
    assert baseline.returncode == 0, baseline.stderr[-3000:]
    [with_tools] = (tmp / "out").rglob("*_samples_trompe_check_blindtest.jsonl")
    [without] = (tmp_path / "out").rglob("*_samples_trompe_check_blindtest.jsonl")
    capsys.readouterr()
    assert illusion_agent(["compare", str(with_tools), str(without), "--json"]) == 0
    comparison = json.loads(capsys.readouterr().out)
    # items 0, 1 and 5 right with tools only (lmms_scripted.WITHOUT_TOOLS); item 9 failed in both, not paired
    assert comparison["mcnemar"]["pairs"] == 11
    assert (comparison["mcnemar"]["a_only"], comparison["mcnemar"]["b_only"]) == (3, 0)
    assert {f["id"]: (f["a"], f["b"]) for f in comparison["flips"]} == {
        "0": ("right", "wrong"), "1": ("right", "wrong"), "5": ("right", "wrong")}
    overall = comparison["groups"][0]
    assert (overall["a"]["failed"], overall["b"]["failed"]) == (1, 1)
    assert without.with_name(f"{without.stem}-compare.html").is_file()
