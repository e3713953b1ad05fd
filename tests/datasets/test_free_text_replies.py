"""Free-text replies the agent refuses are kept as the record's reply, and a harness scorer reads them as the
harness reads a model's text: `report --scorer lmms-eval --json` gives lmms-eval's own numbers on it.

The expected figures are computed by hand with lmms-eval's `vlmsareblind` rules (lmms_eval/tasks/vlmsareblind/
utils.py of lmms-eval 0.7.3, the version tests/lmms runs): `parse_response` on the lowercased reply (Touching Circles:
the whole reply must be yes or no; the number tasks: the first number anywhere; Circled Letter: the first letter
anywhere; the grids: "{r}{c}", "(r, c)" or "rows={r} columns={c}"), equal to the lowercased `groundtruth`; the two
Counting Grid tasks are one (TASK_MAP); `task_mean` averages every task; `accuracy` is the mean over items. A
reply no rule reads is wrong, never left out.
"""

from __future__ import annotations

import json

import pytest

from trompe_agents.illusion.cli import main as illusion_agent

from replicas import write_blindtest_hf
from runlines import written

pytestmark = pytest.mark.usefixtures("scripted_on_path")  # tests/conftest.py: the scripted models on sys.path
FREE_TEXT = ["--backend", "function", "--no-progress", "--model", "scripted_answers:free_text", "--router", "regex",
             "--concurrency", "1"]
# per item, lmms-eval's reading of the reply (hand-applied parse_response) and whether it equals the gold answer
BY_HAND = {"Line Plot Intersections": ("{2}", "2", True), "Touching Circles": ("Yes", "yes", True),
           "Circled Letter": ("The circled letter is {o}.", "t", False),  # the first letter anywhere: "the"
           "Olympic Counting - Circles": ("There are 5 circles.", "5", True),
           "Olympic Counting - Pentagons": ("I count six of them.", None, False),
           "Nested Squares": ("{4}", "4", True),  # the agent's JSON answer 4, as the prompt asks: "{4}"
           "Counting Grid - Blank Grids": ("There are 5 rows and 6 columns.", None, False),
           "Counting Grid - Word Grids": ("rows={5} columns={6}", "5,6", True),
           "Subway Connections": ("{1}", "1", True)}
TASKS_RIGHT = {"line plot intersections": 1.0, "touching circles": 1.0, "olympic counting - circles": 1.0,
               "nested squares": 1.0, "counting grid": 0.5, "subway connections": 1.0,
               "circled letter": 0.0, "olympic counting - pentagons": 0.0}
TASK_MEAN = sum(TASKS_RIGHT.values()) / len(TASKS_RIGHT)  # 5.5 / 8
ACCURACY = sum(right for _, _, right in BY_HAND.values()) / len(BY_HAND)  # 6 / 9


@pytest.fixture
def free_text_run(tmp_path):
    import scripted_answers

    scripted_answers.GRIDS_SEEN.clear()
    out = tmp_path / "run"
    code = illusion_agent(["run", "--dataset", str(write_blindtest_hf(tmp_path / "valid.parquet", 1)), "--out",
                           str(out), "--images-root", str(tmp_path / "img"), *FREE_TEXT])
    assert code != 0  # eight samples were refused: the run says so
    return out


def test_a_refused_free_text_reply_is_kept_in_the_record(free_text_run):
    lines = written(free_text_run)
    replies = {line["keys"]["task"]: (line["reply"], line["answer"], line["error_kind"]) for line in lines.values()}
    assert replies["Nested Squares"] == (None, "4", None)  # answered: its JSON answer, no reply kept
    for task, (reply, _, _) in BY_HAND.items():
        if task != "Nested Squares":
            assert replies[task] == (reply, None, "invalid_answer"), task


def test_report_scores_the_model_text_as_lmms_eval_does_in_both_blocks(free_text_run, capsys):
    assert illusion_agent(["report", str(free_text_run), "--scorer", "lmms-eval", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    benchmark = figures["benchmark"]
    assert benchmark["scorer"] == "lmms-eval"
    assert benchmark["headline"] == {"task_mean": pytest.approx(TASK_MEAN), "accuracy": pytest.approx(ACCURACY)}
    assert {g["name"]: g["accuracy"] for g in benchmark["groups"]} == TASKS_RIGHT
    assert (benchmark["scored"], benchmark["failed"]) == (9, 8)
    # the lmms-eval-shaped block carries the same scorer's numbers, every labelled item counted
    [(name, results)] = figures["lmms_eval"]["results"].items()
    assert results["task_mean,none"] == pytest.approx(TASK_MEAN)
    assert results["accuracy,none"] == pytest.approx(ACCURACY)
    right, n = 6, 9  # lmms-eval's mean_stderr: the sample standard deviation over sqrt(n)
    assert results["accuracy_stderr,none"] == pytest.approx(((right / n) * (1 - right / n) / (n - 1)) ** 0.5)
    assert figures["lmms_eval"]["n-samples"][name] == {"original": 9, "effective": 9}
    assert figures["lmms_eval"]["config"]["scorer"] == "lmms-eval"
    # trompe's own accuracy still counts only the answer the agent read
    assert (figures["totals"]["right"], figures["totals"]["scored"], figures["totals"]["failed"]) == (1, 1, 8)


def test_the_official_scorer_reads_the_same_text_with_the_benchmarks_own_extractor(free_text_run, capsys):
    """BlindTest's authors publish no scorer: trompe's extractor for the gold answer's form reads each reply
    (answers.py `blindtest`), which reads "six", "{o}" and "5 rows and 6 columns" where lmms-eval does not."""
    assert illusion_agent(["score", str(free_text_run), "--output", str(free_text_run / "official.json")]) == 0
    figures = json.loads((free_text_run / "official.json").read_text())
    assert figures["metric"] == {"mean over tasks": 1.0, "accuracy": 1.0}
    assert figures["counts"] == {"records": 9, "scored": 9, "failed": 8, "unlabelled": 0}


def test_the_sample_page_shows_the_refused_reply(free_text_run):
    assert illusion_agent(["report", str(free_text_run)]) == 0
    pages = (free_text_run / "report" / "samples").glob("*.html")
    shown = [p.read_text() for p in pages if "I count six of them." in p.read_text()]
    assert len(shown) == 1 and "The model's last reply (no answer read from it)" in shown[0]
