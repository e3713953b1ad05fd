"""An Inspect log of a trompe task becomes a run folder: `illusion-agent submit` writes the same DataCV file as
from `illusion-agent run` with the same answers, and report and compare read it."""

from __future__ import annotations

import json

import pytest

from trompe_agents.cli import main as trompe
from trompe_agents.illusion.cli import main as illusion_agent
from trompe_agents.testing import dataset_files as files


async def inspect_log(task: str, args: dict, model, log_dir, **options) -> str:
    from inspect_ai import eval_async

    [log] = await eval_async(f"trompe/{task}", task_args=args, model=model, log_dir=str(log_dir), **options)
    assert log.status == "success", log.error
    return log.location


def illusion_run(dataset, out, *extra: str) -> None:
    """`illusion-agent run` with the tests' script as the model (the function backend)."""
    code = illusion_agent(["run", "--dataset", str(dataset), "--out", str(out), "--backend", "function",
                           "--model", "inspect_scripts:trompe_script", "--no-progress", *extra])
    assert code == 0


@pytest.mark.parametrize("task, write, extra", [
    ("datacv_task1", lambda d: files.write_datacv1(d, 5), ()),
    ("datacv_task2", lambda d: files.write_datacv2(d, 4), ("--images-root",)),
])
async def test_submission_from_inspect_equals_illusion_agent_run(task, write, extra, tmp_path, mock_model):
    dataset = write(tmp_path / "data")
    roots = ("--images-root", str(tmp_path / "data" / "images")) if extra else ()
    args = {"dataset": str(dataset), **({"images_root": roots[1]} if roots else {})}
    log = await inspect_log(task, args, mock_model, tmp_path / "logs")
    assert trompe(["import-inspect", log, "--out", str(tmp_path / "imported")]) == 0
    illusion_run(dataset, tmp_path / "native", *roots)
    for run in ("imported", "native"):
        assert illusion_agent(["submit", str(tmp_path / run), "--output", str(tmp_path / f"{run}.txt")]) == 0
    imported = (tmp_path / "imported.txt").read_bytes()
    assert imported == (tmp_path / "native.txt").read_bytes()
    assert len(imported.splitlines()) == len(json.loads((tmp_path / "imported" / "run.json").read_text())["order"])


async def test_imported_run_reports_and_compares(tmp_path, mock_model, capsys):
    dataset = files.write_datacv1(tmp_path / "data", 4, answers=True)
    log = await inspect_log("datacv_task1", {"dataset": str(dataset)}, mock_model, tmp_path / "logs",
                            limit=3)
    run = tmp_path / "imported"
    assert trompe(["import-inspect", log, "--out", str(run)]) == 0
    meta = json.loads((run / "run.json").read_text())
    assert (meta["task"], meta["backend"], meta["model"], meta["format"]) == (1, "inspect", "mockllm/model",
                                                                              "datacv1")
    assert len(meta["order"]) == 4 and len((run / "results.jsonl").read_text().splitlines()) == 3  # --limit 3
    assert illusion_agent(["report", str(run)]) == 0
    assert (run / "report" / "index.html").exists()
    assert illusion_agent(["submit", str(run)]) == 0
    assert (run / "submission_datacv_task1.txt").read_text().splitlines()[-1] == "3 -1"  # never run: no answer
    illusion_run(dataset, tmp_path / "native")
    assert illusion_agent(["compare", str(tmp_path / "native"), str(run)]) == 0
    capsys.readouterr()


async def test_traces_kept_in_the_run_folder_show_in_the_report(tmp_path, mock_model):
    from inspect_ai.solver import SolverSpec

    dataset = files.write_datacv1(tmp_path / "data", 2, answers=True)
    run = tmp_path / "run"
    log = await inspect_log("datacv_task1", {"dataset": str(dataset)}, mock_model, tmp_path / "logs",
                            solver=SolverSpec("trompe/illusion_agent", args_passed={"trace_dir": str(run)}))
    assert trompe(["import-inspect", log, "--out", str(run)]) == 0
    assert (run / "traces" / "0" / "trace.jsonl").exists()
    assert illusion_agent(["report", str(run)]) == 0
    assert "no trace" not in (run / "report" / "samples").joinpath(next(
        p.name for p in (run / "report" / "samples").iterdir() if p.suffix == ".html")).read_text()


def test_import_refuses_what_it_cannot_read(tmp_path, capsys):
    assert trompe(["import-inspect", str(tmp_path / "none.eval"), "--out", str(tmp_path / "r")]) == 2
    assert "log: file not found" in capsys.readouterr().err
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "results.jsonl").write_text("")
    (tmp_path / "x.eval").write_text("")
    assert trompe(["import-inspect", str(tmp_path / "x.eval"), "--out", str(tmp_path / "r")]) == 2
    assert "holds a run already" in capsys.readouterr().err


async def test_import_refuses_a_log_of_another_task(tmp_path, mock_model, capsys):
    from inspect_ai import Task, eval_async
    from inspect_ai.dataset import Sample

    [log] = await eval_async(Task(dataset=[Sample(input="hi", target="x")]), model=mock_model,
                             log_dir=str(tmp_path / "logs"))
    assert trompe(["import-inspect", log.location, "--out", str(tmp_path / "r")]) == 2
    assert "is not a log of a trompe task" in capsys.readouterr().err
