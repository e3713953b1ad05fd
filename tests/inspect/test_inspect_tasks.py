"""Every trompe task runs in Inspect offline (mockllm/model), calls trompe's tools, and scores exactly as
`illusion-agent run` does on the same samples and replies."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from inspect_scripts import trompe_script

from handstats import stderr_n_minus_1
from runlines import as_lines, results
from trompe_agents.backends.function import FunctionBackend
from trompe_agents.datasets.load import load_dataset, resolve_task
from trompe_agents.datasets.metrics import benchmark_metrics
from trompe_agents.datasets.scorers import OFFICIAL, scorers_for
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.testing import dataset_files as files
from trompe_agents.toolclient import ToolClient


def _datacv2(tmp: Path) -> dict:
    return {"dataset": str(files.write_datacv2(tmp, 4, answers=True)), "images_root": str(tmp / "images")}


def _vstar(tmp: Path) -> dict:
    return {"dataset": str(files.write_vstar(tmp, 3)), "images_root": str(tmp / "V_star bench")}


# task name -> the fixture files in the benchmark's real layout, as task arguments
TASKS = {
    "datacv_task1": lambda tmp: {"dataset": str(files.write_datacv1(tmp, 4, answers=True))},
    "datacv_task2": _datacv2,
    "blink": lambda tmp: {"dataset": str(files.write_blink(tmp / "val.parquet", 3)), "images_root": str(tmp / "i")},
    "blindtest": lambda tmp: {"dataset": str(files.write_blindtest(tmp / "valid.parquet", 4)),
                              "images_root": str(tmp / "i")},
    "hallusionbench": lambda tmp: {"dataset": str(files.write_hallusionbench(tmp, 4))},
    "illusionvqa": lambda tmp: {"dataset": str(files.write_illusionvqa(tmp / "test.parquet", 3)),
                                "images_root": str(tmp / "i")},
    "vstar": _vstar,
    "probes": lambda tmp: {"dataset": str(files.write_generic(tmp / "probes", 3).parent)},
}


async def inspect_eval(name: str, args: dict, model, log_dir: Path, **options):
    """One eval of a trompe task by its registry name, as `inspect eval trompe/<name>` runs it."""
    from inspect_ai import eval_async

    [log] = await eval_async(f"trompe/{name}", task_args=args, model=model, log_dir=str(log_dir), **options)
    assert log.status == "success", log.error
    return log


def sample_errors(log) -> dict[str, str]:
    """The samples Inspect counts as errors, with their messages."""
    return {str(s.id): s.error.message for s in log.samples if s.error is not None}


async def trompe_run(args: dict, out: Path, **config) -> dict[str, dict]:
    """The same samples through `illusion-agent run`'s runner with the same script as the model."""
    dataset = load_dataset(args["dataset"], images_root=args.get("images_root"))
    samples = list(dataset)
    task = resolve_task(None, dataset.format, samples, Path(args["dataset"]))
    async with ToolClient.in_process() as tools:
        return as_lines(await run_samples(samples, FunctionBackend(trompe_script), tools,
                                          AgentConfig(task=task, **config),
                                          RunOptions(out=out, progress=False, meta={"format": dataset.format})))


def inspect_records(log) -> dict[str, dict]:
    return {str(s.id): s.store["trompe_record"] for s in log.samples}


def metric_values(log) -> dict[str, float]:
    return {name: m.value for score in log.results.scores for name, m in score.metrics.items()}


@pytest.mark.parametrize("name", sorted(TASKS))
async def test_task_scores_equal_illusion_agent_run(name, tmp_path, mock_model):
    args = TASKS[name](tmp_path / "data")
    log = await inspect_eval(name, args, mock_model, tmp_path / "logs", fail_on_error=False)  # all counted
    ours = await trompe_run(args, tmp_path / "run")
    theirs = inspect_records(log)
    assert sorted(theirs) == sorted(ours)
    errors = sample_errors(log)
    for sample_id, record in ours.items():
        got = theirs[sample_id]
        # a sample without an answer is an Inspect sample error naming why, never a score of 0
        assert (sample_id in errors) == (record["answer"] is None), sample_id
        if record["answer"] is None:
            assert f"trompe: no answer ({record['error_kind']})" in errors[sample_id]
        assert (got["answer"], got["correct"], got["agent"]) == (record["answer"], record["correct"],
                                                                   record["agent"]), sample_id
        assert got["tool_calls"] == record["tool_calls"]
    assert any(r["tool_calls"] == ["crop"] for r in theirs.values())  # the tools were called in Inspect
    fmt = load_dataset(args["dataset"], images_root=args.get("images_root")).format
    values = metric_values(log)
    labelled = [r for r in ours.values() if r["label"] is not None and r["answer"] is not None]  # failed: apart
    right = sum(bool(r["correct"]) for r in labelled)
    assert values["accuracy"] == pytest.approx(right / len(labelled))
    if len(labelled) > 1:  # Inspect's stderr: the sample standard deviation (n - 1) over sqrt(n), by hand
        assert values["stderr"] == pytest.approx(stderr_n_minus_1(right, len(labelled)), abs=1e-12)
    for scorer in scorers_for(fmt):
        # Inspect scores the answered samples (the failed ones are errors to retry); trompe counts failed as wrong
        expected = benchmark_metrics(fmt, results(r for r in ours.values() if r["answer"] is not None), scorer)
        prefix = "" if scorer == OFFICIAL else f"{scorer} "
        for headline, value in expected.headline.items():
            if headline != "accuracy":
                assert values[prefix + headline] == pytest.approx(value), (scorer, headline)
        for group, value, _ in expected.groups:
            assert values[f"{prefix}category {group}"] == pytest.approx(value)


async def test_sample_log_shows_the_conversation_with_images(tmp_path, mock_model):
    from inspect_ai.model import ContentImage

    log = await inspect_eval("datacv_task1", TASKS["datacv_task1"](tmp_path / "data"), mock_model, tmp_path / "logs")
    sample = log.samples[0]
    roles = [m.role for m in sample.messages]
    assert roles[:3] == ["system", "user", "assistant"] and "tool" in roles
    tool = next(m for m in sample.messages if m.role == "tool")
    assert tool.function == "crop" and any(isinstance(c, ContentImage) for c in tool.content)
    assert any(c.text == "img_001:" for c in tool.content if c.type == "text")  # the model sees the id
    assert sample.output.completion.startswith("{") and sample.scores["answer"].answer in ("yes", "no")


async def test_no_tools_baseline_offers_no_tool(tmp_path, mock_model):
    from inspect_ai.solver import SolverSpec

    args = TASKS["datacv_task2"](tmp_path / "data")
    log = await inspect_eval("datacv_task2", args, mock_model, tmp_path / "logs",
                             solver=SolverSpec("trompe/no_tools"))  # --solver trompe/no_tools
    records = inspect_records(log)
    assert all(r["tool_calls"] == [] and r["agent"] == "main" for r in records.values())
    assert all(s.store["trompe_config"]["no_tools"] for s in log.samples)


async def test_unlabelled_samples_are_kept_but_not_scored(tmp_path, mock_model):
    args = {"dataset": str(files.write_datacv1(tmp_path / "data", 3))}  # the test split: no answers
    log = await inspect_eval("datacv_task1", args, mock_model, tmp_path / "logs")
    assert all(math.isnan(s.scores["answer"].value) for s in log.samples)
    assert all(s.store["trompe_record"]["answer"] in ("yes", "no") for s in log.samples)


async def test_missing_dataset_is_refused_by_name(tmp_path, mock_model):
    from inspect_ai import eval_async

    with pytest.raises(ValueError, match="dataset: give the benchmark's local file"):
        await eval_async("trompe/datacv_task1", model=mock_model, log_dir=str(tmp_path))
    with pytest.raises(ValueError, match="file not found"):
        await eval_async("trompe/datacv_task1", task_args={"dataset": str(tmp_path / "nope.csv")}, model=mock_model,
             log_dir=str(tmp_path))
