"""What a SEVEX run records and shows, through the `sevex` CLI with scripted models: NUCT priorities of every
selection, the gain scaling, unusable iterations, repeated dev runs, and apply leaving the dev set out."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from trompe_agents.sevex.cli import main
from trompe_agents.sevex.show import mean_curve

pytestmark = pytest.mark.os_sandbox  # runs generated code through the OS sandbox

SCRIPTED = ["--explorer-backend", "function", "--target-backend", "function", "--target-model",
            "scripted_models:target", "--no-progress"]


def explore(run: Path, dev_set: Path, *extra: str, explorer: str = "explorer") -> int:
    return main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), *SCRIPTED,
                 "--explorer-model", f"scripted_models:{explorer}", *extra])


def state_of(run: Path) -> dict:
    return json.loads((run / "state.json").read_text())


def by_hand(candidate: dict, gain_scale: float, lambda_novel: float = 0.15) -> float:
    """Eq. 2 from the recorded ratings (eq. 1 from the recorded rewards), as a reader would redo it."""
    t = candidate["terms"]
    if candidate["executed"]:
        return t["r_max"] - t["parent_reward"] + 0.5 * math.sqrt(math.log(t["n_parent"]) / t["visits"])
    if t["saturation"] == "inf":
        return math.inf
    return (gain_scale * (t["gain_rating"] - 1) / 9 + lambda_novel * (t["novelty_rating"] - 1) / 9
            + 0.5 * math.sqrt(math.log(t["n_parent"]) / t["executed_siblings"]))


@pytest.mark.parametrize("gain_scale", [None, "0.2"])
def test_every_selection_records_each_candidates_priority_and_terms(tmp_path, dev_set, gain_scale):
    run = tmp_path / "run"
    assert explore(run, dev_set, "--iterations", "4", *(["--gain-scale", gain_scale] if gain_scale else [])) == 0
    scale = float(gain_scale or 1.0)  # the paper's formula by default
    assert json.loads((run / "run.json").read_text())["config"]["nuct"]["gain_scale"] == scale
    state = state_of(run)
    tree = {n["id"]: n for n in state["tree"]["nodes"]}
    selections = state["selections"]
    assert [s["iteration"] for s in selections] == [1, 2, 3, 4]
    for selection in selections:
        assert selection["path"][0] == 0 and len(selection["levels"]) == len(selection["path"]) - 1
        for level, chosen in zip(selection["levels"], selection["path"][1:]):
            assert level["chosen"] == chosen
            # Every child the parent had at that moment is listed, and the chosen one has the top priority.
            listed = [c["node"] for c in level["candidates"]]
            assert set(listed) <= set(tree[level["parent"]]["children"]) and chosen == listed[0]
            for candidate in level["candidates"]:
                recorded = candidate["priority"]
                expected = by_hand(candidate, scale)
                assert recorded == "inf" if expected == math.inf else recorded == pytest.approx(expected, abs=1e-5)
    # The first selection after the root's children were all fresh: unbounded priorities, ranked by gain+novelty.
    first = selections[0]["levels"][0]["candidates"]
    assert all(c["priority"] == "inf" for c in first)
    finite = [c["terms"]["gain"] + c["terms"]["novelty"] for c in first]
    assert finite == sorted(finite, reverse=True)
    assert first[0]["terms"]["gain"] == pytest.approx(scale * (first[0]["terms"]["gain_rating"] - 1) / 9, abs=1e-6)

    assert main(["show", str(run)]) == 0
    page = (run / "report.html").read_text()
    assert "<h2>NUCT selections</h2>" in page and "iteration 4: #0 &rarr;" in page
    assert f"&quot;gain_scale&quot;: {scale}" in page and "<tr class=chosen>" in page


def test_an_ideator_that_delivers_nothing_is_warned_counted_and_stops_the_run(tmp_path, dev_set, capsys):
    run = tmp_path / "run"
    assert explore(run, dev_set, "--iterations", "10", "--max-unusable", "3", explorer="broken_ideator") == 0
    err = capsys.readouterr().err
    state = state_of(run)
    unusable = [h for h in state["history"] if h["unusable"]]
    assert len(unusable) == 3 and state["iteration"] == 2  # iterations 0, 1, 2 in a row; 10 were asked for
    assert "sevex: warning: iteration 1: ideator: no usable reply" in err
    assert "sevex: stopped: 3 iterations in a row produced nothing usable (--max-unusable 3)" in err
    assert main(["show", str(run)]) == 0
    page = (run / "report.html").read_text()
    assert "3 unusable iteration(s)" in page and "<b>Stopped:</b>" in page


def test_max_unusable_zero_never_stops(tmp_path, dev_set, capsys):
    run = tmp_path / "run"
    assert explore(run, dev_set, "--iterations", "4", "--max-unusable", "0", explorer="broken_ideator") == 0
    assert state_of(run)["iteration"] == 4 and len([h for h in state_of(run)["history"] if h["unusable"]]) == 5
    assert "stopped" not in capsys.readouterr().err


def test_only_the_iteration_whose_program_failed_everywhere_is_unusable(tmp_path, dev_set):
    run = tmp_path / "run"
    assert explore(run, dev_set, "--iterations", "3") == 0
    state = state_of(run)
    secret = next(n for n in state["tree"]["nodes"] if "secret" in n["idea"])  # its code escapes the sandbox
    flagged = {h["iteration"]: h["unusable"] for h in state["history"] if h["unusable"]}
    assert flagged == {secret["iteration"]: "engineer: the program failed on every dev sample (forbidden)"}


def test_repeats_average_runs_and_the_analyst_sees_images_of_every_run_and_call(tmp_path, dev_set):
    run = tmp_path / "run"
    assert explore(run, dev_set, "--iterations", "1", "--repeats", "2", explorer="twice_engineer") == 0
    nodes = {n["id"]: n for n in state_of(run)["tree"]["nodes"]}
    executed = [n for n in nodes.values() if n["experiment"]]
    assert len(executed) == 2
    for node in executed:
        exp = node["experiment"]
        assert len(exp["runs"]) == 2 and exp["reward"] == pytest.approx(sum(exp["runs"]) / 2)
        assert sorted({r["run"] for r in exp["results"]}) == [1, 2] and len(exp["results"]) == 12
        folder = run / "nodes" / str(node["id"])
        assert (folder / "results.jsonl").exists() and (folder / "results_run2.jsonl").exists()
    program = next(n for n in executed if n["id"] != 0)
    names = [Path(p).name for p in program["experiment"]["images"]]
    # Successes from both runs, and both images each program sent (its two ask_lvlm calls).
    assert names[:4] == ["ok_run1_s0.png", "ok_run1_s0_2.png", "ok_run2_s0.png", "ok_run2_s0_2.png"]


def test_apply_leaves_the_development_samples_out_unless_asked(tmp_path, dev_set, capsys):
    run = tmp_path / "run"
    assert explore(run, dev_set, "--iterations", "0", "--dev-size", "4") == 0
    dev_ids = json.loads((run / "run.json").read_text())["dev_ids"]
    capsys.readouterr()
    apply = ["apply", str(run), "--dataset", str(dev_set), "--target-backend", "function", "--target-model",
             "scripted_models:target", "--no-progress", "--out", str(tmp_path / "applied.jsonl")]
    assert main(apply) == 0
    captured = capsys.readouterr()
    assert "left out 4 development samples of the run (--include-dev keeps them)" in captured.err
    assert "on 2 samples" in captured.out
    applied = [json.loads(line)["id"] for line in (tmp_path / "applied.jsonl").read_text().splitlines()]
    assert not set(applied) & set(dev_ids) and len(applied) == 2
    for source in (run, run / "best"):  # the saved prompt folder remembers its dev samples too
        assert main([*apply[:1], str(source), *apply[2:], "--include-dev"]) == 0
        assert "on 6 samples" in capsys.readouterr().out


def test_bad_gain_scale_and_repeats_are_named(tmp_path, dev_set, capsys):
    for bad, message in ((["--gain-scale", "-1"], "argument --gain-scale: expected a number >= 0"),
                         (["--repeats", "0"], "argument --repeats: expected an integer >= 1"),
                         (["--max-unusable", "-2"], "argument --max-unusable: expected an integer >= 0")):
        with pytest.raises(SystemExit):
            explore(tmp_path / "run", dev_set, *bad)
        assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_show_averages_the_best_accuracy_curve_over_runs(tmp_path, dev_set, capsys):
    runs = [tmp_path / "a", tmp_path / "b"]
    assert explore(runs[0], dev_set, "--iterations", "2") == 0
    assert explore(runs[1], dev_set, "--iterations", "3", "--gain-scale", "0.2") == 0
    histories = [state_of(r)["history"] for r in runs]
    assert main(["show", str(runs[0]), "--with", str(runs[1])]) == 0
    page = (runs[0] / "report.html").read_text()
    assert "Best dev accuracy averaged over 2 runs" in page
    mean = mean_curve(histories)
    assert [p["iteration"] for p in mean] == [0, 1, 2]  # up to the shorter run
    for point, a, b in zip(mean, *histories):
        assert point["best"] == pytest.approx((a["best"] + b["best"]) / 2)
    with pytest.raises(SystemExit, match="--with: .* holds no run"):
        main(["show", str(runs[0]), "--with", str(tmp_path / "none")])
