"""Runs, resumes and submissions in-process: what a plain resume keeps, what --retry-errors redoes, early stops.

A scripted function model answers or fails per sample (a `BackendError` of a given kind), so each case is exact
and fast; test_run.py kills a real run with SIGKILL and test_failures.py goes through the CLI and fake vendors.
This file is what `tools/mutation.py --group runs` runs first.
"""

from __future__ import annotations

import errno
import json
import re
import sys
import time
from multiprocessing import resource_tracker

import pytest
from PIL import Image

from trompe_agents.backends.base import BackendError, BackendOptions
from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.datasets.base import Sample
from trompe_agents.datasets.metrics import metric_keys
from trompe_agents.executors import create_executor
from trompe_agents.illusion.job import WorkerSpec
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.pricing import Price
from trompe_agents.backends.ratelimit import RateLimiter
from trompe_agents.illusion.correctness import matches_label
from trompe_agents.illusion.results import RESULTS, first_error
from runlines import as_lines, results, written
from trompe_agents.illusion.runmeta import read_meta
from trompe_agents.illusion.runner import STOP_AFTER, RunFolderUnwritable, RunStopped, run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.illusion.tally import Tally
from trompe_agents.illusion.submit import MODEL_JSON, write_submission
from trompe_agents.plugins import create_backend
from trompe_agents.testing import FakeVendor, final
from trompe_agents.toolclient import ToolClient, ToolClientError

CONFIG = AgentConfig(task=1, router="regex")


class Model:
    """Answers 'yes' at once, except for the samples in `fail`, where it raises a BackendError of that kind."""

    def __init__(self, fail: dict[str, str] | None = None, answer: str = "yes"):
        self.fail, self.answer, self.asked = fail or {}, answer, []

    def __call__(self, messages, tools):
        sample = re.search(r"sample (s\d+)", messages[-1].text).group(1)
        self.asked.append(sample)
        if sample in self.fail:
            kind = self.fail[sample]
            if kind == "disk_full":
                raise OSError(errno.ENOSPC, "No space left on device")
            raise BackendError(f"vendor at http://x: m: {kind}: it failed", kind)
        return {"reasons": "measured", "answer": self.answer}


def dataset(tmp_path, n: int = 6, ids: str = "s{}") -> list[Sample]:
    image = tmp_path / "image.png"
    Image.new("RGB", (24, 24), "white").save(image)
    return [Sample(ids.format(i), [image], f"Is the line in sample s{i} straight (droite, épaisse)?",
                   answer="1" if i % 2 == 0 else "0", category="line straightness",  # DataCV labels Task I 1/0
                   metadata={"index": 100 + i, "family": "hering", "magnitude": 0.25 * i, "counterfactual": i == 1,
                             "figure_id": f"fig{i // 2}"})
            for i in range(n)]


async def run(samples, model, tools, out, config=CONFIG, **options):
    options = {"concurrency": 1, "progress": False, **options}
    records = await run_samples(samples, FunctionBackend(model, "scripted"), tools, config,
                                RunOptions(out=out, **options))
    return as_lines(records)


def lines(out) -> list[dict]:
    return [json.loads(line) for line in (out / RESULTS).read_text().splitlines()]


async def test_plain_resume_keeps_answers_and_failures_and_retry_errors_redoes_only_failures(tmp_path):
    samples, out = dataset(tmp_path), tmp_path / "run"
    first = Model(fail={"s1": "server", "s4": "not_found"})
    async with ToolClient.in_process() as tools:
        records = await run(samples, first, tools, out)
        assert first.asked == [s.id for s in samples]
        assert [(r["answer"], r["error_kind"]) for r in records.values()] == [
            ("yes", None), (None, "server"), ("yes", None), ("yes", None), (None, "not_found"), ("yes", None)]

        again = Model()
        assert await run(samples, again, tools, out) == records and again.asked == []  # nothing re-run
        assert len(lines(out)) == len(samples)

        fixed = Model()
        redone = await run(samples, fixed, tools, out, retry_errors=True)
    assert fixed.asked == ["s1", "s4"]  # only the failed samples, not the answered ones
    assert all(r["answer"] == "yes" and r["error"] is None for r in redone.values())
    assert [r["id"] for r in lines(out)] == [s.id for s in samples] + ["s1", "s4"]  # appended, never rewritten
    assert written(out) == redone
    invocations = read_meta(out)["invocations"]
    assert [(i["samples"], i["todo"]) for i in invocations] == [(6, 6), (6, 0), (6, 2)]


async def test_a_sample_cut_short_by_a_full_disk_stops_the_run_and_runs_again_on_a_plain_resume(tmp_path):
    samples, out = dataset(tmp_path, 4), tmp_path / "run"
    async with ToolClient.in_process() as tools:
        with pytest.raises(RunFolderUnwritable, match=r"^--out .*: sample 's2' could not be written \(OSError: "
                           r"\[Errno 28\] No space left on device\); the finished samples are kept"):
            await run(samples, Model(fail={"s2": "disk_full"}), tools, out)
        assert written(out)["s2"]["error_kind"] == "disk_full" and "s3" not in written(out)
        resumed = Model()
        records = await run(samples, resumed, tools, out)
    assert resumed.asked == ["s2", "s3"] and records["s2"]["answer"] == "yes"


async def test_a_line_torn_by_a_kill_is_cut_and_that_sample_runs_again(tmp_path):
    samples, out = dataset(tmp_path, 4), tmp_path / "run"
    async with ToolClient.in_process() as tools:
        await run(samples, Model(), tools, out)
        text = (out / RESULTS).read_text()
        (out / RESULTS).write_text(text[: len(text) - 40])  # killed while writing the last line
        stale = out / "traces" / "s3" / "leftover.txt"
        stale.parent.mkdir(parents=True, exist_ok=True)
        stale.write_text("from the killed attempt")
        resumed = Model()
        records = await run(samples, resumed, tools, out)
    assert resumed.asked == ["s3"] and records["s3"]["answer"] == "yes"
    assert [r["id"] for r in lines(out)] == ["s0", "s1", "s2", "s3"]  # every line whole, one per sample
    assert not stale.exists(), "an interrupted sample's trace starts afresh"


async def test_three_identical_failures_that_no_retry_fixes_stop_the_run(tmp_path):
    samples, out = dataset(tmp_path, 8), tmp_path / "run"
    model = Model(fail={s.id: "auth" for s in samples})
    async with ToolClient.in_process() as tools:
        with pytest.raises(RunStopped) as info:
            await run(samples, model, tools, out)
    assert info.value.kind == "auth" and len(model.asked) == STOP_AFTER == 3
    assert str(info.value) == ("stopped: the first 3 samples failed with the same error: "
                               "vendor at http://x: m: auth: it failed")
    assert [r["error_kind"] for r in lines(out)] == ["auth"] * 3


async def test_the_early_stop_also_holds_with_concurrent_workers(tmp_path):
    samples, out = dataset(tmp_path, 12), tmp_path / "run"
    model = Model(fail={s.id: "credit" for s in samples})
    async with ToolClient.in_process() as tools:
        with pytest.raises(RunStopped):
            await run(samples, model, tools, out, concurrency=3)
    assert len(model.asked) < len(samples) and len(lines(out)) == len(model.asked)


@pytest.mark.parametrize(("fail", "why"), [
    ({"s0": "auth", "s1": "not_found", "s2": "auth"}, "different errors"),
    ({"s0": "server", "s1": "server", "s2": "server"}, "a retryable kind: the vendor may recover"),
    ({"s1": "auth", "s2": "auth", "s3": "auth"}, "the first sample was answered"),
    ({"s0": "quota", "s1": "quota"}, "only two failed")])
async def test_no_early_stop_unless_the_first_three_fail_alike_for_good(tmp_path, fail, why):
    samples = dataset(tmp_path, 5)
    model = Model(fail=fail)
    async with ToolClient.in_process() as tools:
        records = await run(samples, model, tools, tmp_path / "run")
    assert len(records) == len(model.asked) == 5, why


async def test_three_samples_failing_alike_are_all_recorded_without_a_stop(tmp_path):
    samples = dataset(tmp_path, 3)  # nothing left to spare: the run simply ends with three failures
    async with ToolClient.in_process() as tools:
        records = await run(samples, Model(fail={s.id: "auth" for s in samples}), tools, tmp_path / "run")
    assert [r["error_kind"] for r in records.values()] == ["auth"] * 3


async def test_a_record_says_what_was_asked_answered_and_scored(tmp_path):
    samples, out = dataset(tmp_path, 2), tmp_path / "run"
    samples[1].error = "image missing: lost.png"
    started = time.monotonic()
    async with ToolClient.in_process() as tools:
        records = await run(samples, Model(), tools, out, limit=2)
    elapsed = time.monotonic() - started
    good, bad = records["s0"], records["s1"]
    assert {k: good[k] for k in ("id", "index", "position", "label", "family", "answer", "agent", "correct",
                                 "model", "error", "error_kind", "rounds")} == {
        "id": "s0", "index": 100, "position": 0, "label": "1", "family": "hering", "answer": "yes", "agent": "main",
        "correct": True, "model": "scripted", "error": None, "error_kind": None, "rounds": 1}
    assert good["trace"] == "traces/s0" and (out / good["trace"]).is_dir()
    assert good["question"] == samples[0].question and good["images"] == [str(samples[0].images[0])]
    assert (good["category"], good["magnitude"], bad["magnitude"], bad["counterfactual"]) == (
        "line straightness", 0.0, 0.25, True)
    assert good["keys"] == metric_keys(samples[0].metadata) == {"figure_id": "fig0"} and good["choices"] is None
    assert (good["reasons"], good["route"], good["stops"], good["tool_calls"]) == (
        "measured", "line straightness", {"main": "answer"}, [])
    assert bad["error"] == "DatasetError: image missing: lost.png" and bad["error_kind"] == "run"
    assert (bad["answer"], bad["agent"], bad["correct"], bad["position"], bad["cost"]) == (None, None, None, 1, 0.0)
    assert (bad["reasons"], bad["route"], bad["rounds"], bad["empty_replies"], bad["stops"]) == ("", None, 0, 0, {})
    assert bad["usage"] == good["usage"] and bad["tool_calls"] == bad["refused_calls"] == bad["unknown_calls"] == []
    assert set(bad) == set(good), "every record has the same columns, answered or not"
    for record in (good, bad):
        assert isinstance(record["seconds"], float) and 0 <= record["seconds"] <= elapsed  # within the run
        assert round(record["seconds"], 3) == record["seconds"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", record["finished"])


async def test_each_record_is_written_readable_and_handed_on_as_it_finishes(tmp_path):
    samples, out = dataset(tmp_path, 3, ids="set/{}"), tmp_path / "nested" / "runs" / "one"
    del samples[2].metadata["index"]  # a dataset without its own numbering: the id stands in
    seen = []
    async with ToolClient.in_process() as tools:
        records = as_lines(await run_samples(samples, FunctionBackend(Model(), "scripted"), tools, CONFIG,
                                    RunOptions(out=out, concurrency=1, progress=False), on_result=seen.append))
    assert [r.id for r in seen] == ["set/0", "set/1", "set/2"]
    assert [r.to_json() for r in seen] == list(records.values())
    assert records["set/1"]["trace"] == "traces/set_1" and (out / "traces" / "set_1").is_dir()
    assert records["set/2"]["index"] == "set/2" and read_meta(out)["order"][2] == ["set/2", "set/2"]
    assert "épaisse" in (out / RESULTS).read_text(encoding="utf-8")  # UTF-8 as written, not \u escapes


async def test_the_progress_bar_counts_resumed_samples_and_shows_the_tally(tmp_path, capsys):
    samples, out = dataset(tmp_path, 4), tmp_path / "run"
    async with ToolClient.in_process() as tools:
        await run(samples, Model(fail={"s1": "server"}), tools, out, limit=2)
        capsys.readouterr()
        await run(samples, Model(), tools, out, progress=True, allow_change=("dataset",))  # a larger --limit
    bar = capsys.readouterr().err.split("\r")[-1]
    assert bar.startswith("task 1: 100%") and "4/4" in bar and "sample/s" in bar
    assert "acc=66.7%" in bar and "fail=1" in bar and "tok=0" in bar and "cost=$0.0000" in bar  # s1 failed, s3 wrong


async def test_a_rate_limited_run_still_sends_the_vendor_the_answer_schema(tmp_path):
    def script(body, n):
        return final('{"reasons": "r", "answer": "no"}')

    with FakeVendor("gemini", script) as vendor:
        backend = create_backend("gemini", BackendOptions(model="gemini-3-flash-preview", base_url=vendor.base_url,
                                                          api_key="k"))
        async with ToolClient.in_process() as tools:
            records = as_lines(await run_samples(dataset(tmp_path, 2), backend, tools, CONFIG,
                                        RunOptions(out=tmp_path / "run", rate_limit=60000, progress=False)))
    assert [r["answer"] for r in records.values()] == ["no", "no"] and len(vendor.requests) == 2
    for body in vendor.bodies:  # the answer schema, a keyword argument, got through the rate limiter
        assert body["generationConfig"]["responseJsonSchema"]["properties"]["answer"]["enum"] == ["yes", "no"]


async def test_an_unknown_tag_or_tool_fails_before_any_sample(tmp_path):
    async with ToolClient.in_process() as tools:
        for config in (AgentConfig(task=1, router="regex", tags=["astrology"]),
                       AgentConfig(task=1, router="regex", allow=["tarot_reading"])):
            with pytest.raises(ToolClientError):
                await run(dataset(tmp_path, 2), Model(), tools, tmp_path / "run", config=config)
    assert not (tmp_path / "run").exists()


async def test_limit_runs_the_first_samples_and_run_json_records_the_dataset_order(tmp_path):
    samples, out = dataset(tmp_path, 5), tmp_path / "run"
    model = Model(answer="no")
    async with ToolClient.in_process() as tools:
        records = await run(samples, model, tools, out, limit=2, meta={"dataset": "probes", "command": ["x"]})
    assert model.asked == ["s0", "s1"] and [r["correct"] for r in records.values()] == [False, True]
    meta = read_meta(out)
    assert meta["order"] == [[s.id, 100 + i] for i, s in enumerate(samples)] and meta["dataset"] == "probes"
    assert (meta["task"], meta["backend"], meta["model"]) == (1, "function", "scripted")
    [invocation] = meta["invocations"]
    assert (invocation["samples"], invocation["todo"], invocation["command"]) == (2, 2, ["x"])
    assert (invocation["backend"], invocation["model"], invocation["concurrency"], invocation["rate_limit"]) == (
        "function", "scripted", 1, None)
    assert "command" not in meta and invocation["agent"] == CONFIG.describe()
    assert (meta["normalize"], meta["no_tools"], meta["prompts"]) == (False, False, CONFIG.prompts.hashes())
    created = meta["created"]
    async with ToolClient.in_process() as tools:
        await run(samples, model, tools, out, concurrency=2, allow_change=("dataset",))  # all 5 now
    meta = read_meta(out)
    assert meta["created"] == created and meta["invocations"][1]["command"] == sys.argv  # none given: this one
    assert meta["invocations"][1]["concurrency"] == 2


async def test_a_run_folder_refuses_another_task_or_dataset_and_repeated_ids(tmp_path):
    samples, out = dataset(tmp_path, 3), tmp_path / "run"
    async with ToolClient.in_process() as tools:
        await run(samples, Model(), tools, out, meta={"dataset": "probes"})
        with pytest.raises(ValueError) as task:
            await run(samples, Model(), tools, out, config=AgentConfig(task=2, router="regex"))
        with pytest.raises(ValueError) as other:
            await run(dataset(tmp_path, 3, ids="t{}"), Model(), tools, out)
        with pytest.raises(ValueError) as repeated:
            await run(samples + samples[:2], Model(), tools, tmp_path / "dup")
    assert str(task.value).startswith(f"{out} holds another run: task (1 -> 2); answers (yes/no -> A-D); ")
    assert str(other.value).startswith(f"{out} holds another run: dataset.sha256 (")
    for refusal in (task, other):  # one line, and no --allow-change offered: neither change is harmless
        assert str(refusal.value).endswith("; start a new folder with another --out")
        assert "\n" not in str(refusal.value)
    assert str(repeated.value) == "dataset: sample ids must be unique; repeated: s0, s1"
    with pytest.raises(ValueError, match="repeated: s0, s1, s2, s3, s4$"):  # the first five
        async with ToolClient.in_process() as tools:
            await run(dataset(tmp_path, 6) * 2, Model(), tools, tmp_path / "dup")


async def test_task_two_options_reach_the_model_and_shape_the_answer(tmp_path):
    image = dataset(tmp_path, 1)[0].images[0]
    sample = Sample("q1", [image], "Which line is longer?", answer="C", choices=["the top", "the bottom", "equal"])

    def reads_options(messages, tools):
        options = dict(re.findall(r"^([A-D])\. (.+)$", messages[-1].text, re.M))
        return {"reasons": "measured", "answer": next((k for k, v in options.items() if v == "equal"), "D")}

    async with ToolClient.in_process() as tools:
        records = await run([sample], reads_options, tools, tmp_path / "run",
                            config=AgentConfig(task=2, router="regex"))
    assert (records["q1"]["answer"], records["q1"]["correct"], records["q1"]["choices"]) == (
        "C", True, ["the top", "the bottom", "equal"])


async def test_when_both_agents_fail_the_record_keeps_both_errors_and_the_last_kind(tmp_path):
    def crops_then_rescue_fails(messages, tools):
        if messages[0].text.startswith("# Rescue"):
            raise BackendError("vendor at http://x: m: overloaded: 529 overloaded_error: Overloaded", "overloaded")
        return tool_call("crop", image="original", box=[0, 0, 8, 8])

    config = AgentConfig(task=1, router="regex", max_rounds=1, rescue_rounds=1)
    async with ToolClient.in_process() as tools:
        records = await run(dataset(tmp_path, 1), crops_then_rescue_fails, tools, tmp_path / "run", config=config)
    record = records["s0"]
    assert record["error"] == ("main: no final answer after 1 rounds; rescue: BackendError: vendor at http://x: m: "
                               "overloaded: 529 overloaded_error: Overloaded")
    assert (record["error_kind"], record["answer"], record["agent"]) == ("overloaded", None, None)
    assert first_error(record["error"]) == "no final answer after 1 rounds"


def test_bad_run_options_are_one_line_errors_naming_the_option():
    with pytest.raises(ValueError, match="^concurrency must be at least 1, got 0$"):
        RunOptions(out="x", concurrency=0)
    with pytest.raises(ValueError, match="^limit must be at least 1, got 0$"):
        RunOptions(out="x", limit=0)
    with pytest.raises(ValueError, match=r"^rate limit must be > 0 requests per minute, got -1$"):
        RunOptions(out="x", rate_limit=-1)
    with pytest.raises(ValueError, match=r"^rate limit must be > 0 requests per minute, got 0$"):
        RunOptions(out="x", rate_limit=0)
    with pytest.raises(ValueError, match=r"^rate limit must be > 0 requests per minute, got 0$"):
        RateLimiter(0)
    assert RunOptions(out="x", concurrency=1, limit=1, rate_limit=0.5).limit == 1
    assert RateLimiter(1).interval == 60.0 and RateLimiter(0.5).interval == 120.0


@pytest.mark.parametrize(("answer", "label", "task", "correct"), [
    ("yes", "1", 1, True), ("no", "0", 1, True), ("yes", "True", 1, True), ("no", " false ", 1, True),
    ("yes", "(Yes)", 1, True), ("no", "yes", 1, False), ("B", "(b)", 2, True), ("1", "1", 2, True),
    ("yes", "1", 2, False), ("A", None, 2, None), (None, "A", 2, None)])
def test_answers_are_scored_against_labels_as_the_datasets_write_them(answer, label, task, correct):
    assert matches_label(answer, label, task, None) is correct  # None: the item states no answer type


def test_the_progress_bar_shows_accuracy_failures_tokens_and_cost():
    usage = {"input_tokens": 1000, "output_tokens": 200}
    tally = Tally(results([{"answer": "yes", "agent": "main", "correct": True, "usage": usage, "cost": 0.25},
                   {"answer": "no", "agent": "main", "correct": False, "usage": usage, "cost": 0.5},
                   {"answer": None, "agent": None, "correct": None, "usage": {}, "cost": 0.0},
                   {"answer": None, "agent": None, "correct": None, "usage": {}, "cost": None}]))
    assert tally.postfix() == {"acc": "50.0%", "fail": "2", "tok": "2,400", "cost": "$0.7500"}
    unpriced = {"answer": "yes", "agent": "main", "correct": None, "usage": usage, "cost": None}  # no price
    tally.add(results([unpriced])[0])
    assert tally.postfix() == {"acc": "50.0%", "fail": "2", "tok": "3,600", "cost": "?"}
    assert Tally([]).postfix() == {"acc": "-", "fail": "0", "tok": "0", "cost": "$0.0000"}


async def test_cost_is_priced_for_the_model_that_answered_and_unknown_without_a_price(tmp_path):
    samples = dataset(tmp_path, 1)
    async with ToolClient.in_process() as tools:
        priced = await run(samples, Model(), tools, tmp_path / "a", prices={"scripted": Price(input=2.0, output=10.0)})
        unpriced = await run(samples, Model(), tools, tmp_path / "b", prices={"other": Price(input=2.0, output=10.0)})
    assert priced["s0"]["cost"] == 0.0 and unpriced["s0"]["cost"] is None  # the function model uses no tokens


async def test_submission_in_dataset_order_with_minus_one_for_failures_and_model_json(tmp_path):
    samples, out = dataset(tmp_path, 5), tmp_path / "run"
    async with ToolClient.in_process() as tools:
        latest = AgentConfig(task=1, router="regex", max_rounds=3)
        await run(samples, Model(fail={"s3": "server"}), tools, out, config=latest, limit=4, concurrency=3)
        await run(samples, Model(answer="no"), tools, out, config=latest, limit=1, allow_change=("dataset",))
    with (out / RESULTS).open("a") as results:  # an older run's invented default is no answer either
        results.write(json.dumps({**written(out)["s2"], "answer": "no", "agent": "default"}) + "\n")
    path = write_submission(out)
    assert path == out / "submission_datacv_task1.txt"
    assert path.read_text() == "100 1\n101 1\n102 -1\n103 -1\n104 -1\n"  # s4 was never run
    text = (out / MODEL_JSON).read_text()
    agent = {k: v for k, v in latest.describe().items() if k != "prompts"}
    assert agent["task"] == 1 and agent["normalize"] is False and agent["max_rounds"] == 3
    info = json.loads(text)
    assert {k: info[k] for k in ("model", "parameters")} == {"model": "scripted",
                                                             "parameters": {"backend": "function", **agent}}
    assert info["prompts"] == latest.describe()["prompts"] and set(info) == {"model", "parameters", "prompts", "sent"}
    assert text.startswith('{\n  "model": "scripted",\n  "parameters": {\n    "backend"') and text.endswith("}\n")
    elsewhere = write_submission(out, out=tmp_path / "kit" / "task1" / "predictions.txt")
    assert elsewhere == tmp_path / "kit" / "task1" / "predictions.txt" and elsewhere.read_text() == path.read_text()
    assert (elsewhere.parent / MODEL_JSON).read_text() == text


def test_a_failure_is_summed_up_by_its_first_error_without_prefixes():
    assert first_error("main: BackendError: claude at u: m: auth: 401; rescue: BackendError: x") == \
        "claude at u: m: auth: 401"
    assert first_error("rescue: QuotaExhausted: gemini at u: m: quota: 429") == "gemini at u: m: quota: 429"
    assert first_error("main: a; b; rescue: c") == "a; b" and first_error(None) == ""


def test_results_skip_a_line_that_is_not_json_and_keep_the_latest_record_per_sample(tmp_path):
    (tmp_path / RESULTS).write_text('{"id": "a", "answer": "no"}\n{"id": "b", "ans\n{"id": "a", "answer": "yes"}\n')
    assert written(tmp_path) == {"a": {"id": "a", "answer": "yes"}}
    assert written(tmp_path / "nothing") == {} and read_meta(tmp_path / "nothing") == {}


def test_a_submission_from_a_bare_run_folder_falls_back_to_ids_and_file_order(tmp_path):
    """A run.json with only the task and records without position or index (written by hand or another tool)."""
    (tmp_path / "run.json").write_text('{"task": 2}')
    (tmp_path / RESULTS).write_text('{"id": "b7", "answer": "C", "agent": "main"}\n{"id": "a3", "answer": null}\n')
    path = write_submission(tmp_path)
    assert path.read_text() == "b7 2\na3 -1\n"
    info = json.loads((tmp_path / MODEL_JSON).read_text())
    assert {k: info[k] for k in ("model", "parameters")} == {"model": None, "parameters": {"backend": None}}
    assert info["sent"] == {"not_sent": [], "requests": 0} and info["prompts"] == {}  # no trace: nothing was seen sent


def test_submission_refuses_a_folder_without_a_run(tmp_path):
    with pytest.raises(ValueError, match=f"^{re.escape(str(tmp_path))}: no run.json with a task; is this a run "
                                         "directory\\?$"):
        write_submission(tmp_path)


async def test_an_executor_run_stops_early_too_and_leaves_the_rest_queued(tmp_path, scripted_on_path):
    samples, out = dataset(tmp_path, 12), tmp_path / "run"
    spec = WorkerSpec(backend="function", options=BackendOptions(model="scripted:wrong_key"), config=CONFIG,
                      out=out.resolve())
    try:
        async with ToolClient.in_process() as tools:
            with pytest.raises(RunStopped) as info:
                await run_samples(samples, FunctionBackend(Model(), "scripted"), tools, CONFIG,
                                  RunOptions(out=out, progress=False),
                                  executor=create_executor("local", spec, workers=2, concurrency=1))
    finally:  # the workers' queues started this process's semaphore tracker; it would outlive the test
        resource_tracker._resource_tracker._stop()
    assert info.value.kind == "auth" and "invalid x-api-key" in str(info.value)
    assert STOP_AFTER <= len(lines(out)) < len(samples)
