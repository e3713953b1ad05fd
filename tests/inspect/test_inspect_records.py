"""The Inspect adapter's samples and records, called directly (no `eval`): what a sample carries into the log,
the record Inspect's scorer stores for a solver other than trompe's, and the answer it reads from that solver's
final text, each against what `illusion-agent run` records and scores for the same sample."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from trompe_agents.datasets.answer_types import of_sample
from trompe_agents.datasets.base import Sample
from trompe_agents.datasets.load import load_dataset
from trompe_agents.illusion.answering import answer_one
from trompe_agents.records import SampleResult
from trompe_agents.testing import dataset_files as files

# an illusion item as `trompe probes generate` writes it: its index, family, magnitude and unit, its
# counterfactual and (for a HallusionBench-shaped scorer) a grouping key in metadata
METADATA = {"index": 7, "family": "muller_lyer", "magnitude": 0.25, "magnitude_unit": "fraction",
            "counterfactual": True, "set_id": "3", "i": 1}


def illusion_sample(error: str | None = None, metadata: dict | None = METADATA) -> Sample:
    return Sample("s7", [Path("/data/images/s7.png")], "Are the lines equal?", "yes", None, "size", metadata, error)


def logged(sample: Sample, position: int = 4, fmt: str = "jsonl", task: int = 1) -> dict:
    """The sample's metadata as the Inspect log holds it (JSON written and read back)."""
    from trompe.samples import sample_metadata

    return json.loads(json.dumps(sample_metadata(sample, position, fmt, task)))


def task_state(meta: dict, completion: str, store: dict | None = None, error: str | None = None):
    """The TaskState Inspect hands a scorer after a solver's turn ended in `completion`."""
    from inspect_ai.model import ModelName, ModelOutput
    from inspect_ai.solver import TaskState

    from trompe.samples import KEY

    output = ModelOutput.from_content("mockllm/model", completion)
    output.error = error
    return TaskState(ModelName("mockllm/model"), meta["id"], 1, meta["question"], [], output=output,
                     metadata={KEY: meta}, store=store)


@pytest.mark.parametrize("kind", [None, "integer", "choice:3"])
def test_a_logged_sample_reads_back_as_the_sample_it_was(kind):
    from trompe.samples import answer_type, trompe_sample

    choices = ["red", "green", "blue"] if kind == "choice:3" else None
    sample = Sample("s1", [Path("/data/a.png"), Path("/data/b.png")], "Which?", "B" if choices else "3", choices,
                    "colour", METADATA, None, kind)
    meta = logged(sample, position=2, fmt="illusionvqa", task=2)
    assert {k: meta[k] for k in ("position", "format", "task")} == {"position": 2, "format": "illusionvqa", "task": 2}
    described = of_sample(sample).describe()  # a sample without one gets its gold answer's form
    assert trompe_sample({"trompe": meta}) == replace(sample, answer_type=described)
    assert answer_type(meta).describe() == described == (kind or "integer")
    assert answer_type({**meta, "answer_type": None}) is None


def test_a_path_in_a_sample_s_metadata_is_logged_as_its_text():
    sample = illusion_sample(metadata={**METADATA, "source": Path("/data/sheet.csv")})
    assert logged(sample)["metadata"]["source"] == "/data/sheet.csv"


def test_a_sample_without_metadata_or_with_an_error_reads_back_with_both_as_they_were():
    from trompe.samples import trompe_sample

    broken = illusion_sample(error="image missing: s7.png", metadata=None)
    assert trompe_sample({"trompe": logged(broken)}) == replace(broken, metadata={}, answer_type="yesno")


def test_the_inspect_record_holds_the_facts_illusion_agent_run_records_for_the_sample(tmp_path):
    """answer_one (what `illusion-agent run` calls) on a sample whose image is missing fails before any model
    call, so its record holds just the sample's facts: the record Inspect makes for the same sample and model
    must hold the same ones."""
    import asyncio

    from trompe.samples import result_record

    sample = illusion_sample(error="image missing")
    agent = SimpleNamespace(backend=SimpleNamespace(model="mockllm/model"))  # read for the model name only
    run = asyncio.run(answer_one(agent, sample, 4, tmp_path, 1, {}))
    inspect = result_record(logged(sample), "mockllm/model", None, "", None, "inspect", "image missing",
                            kind="run")
    facts = ("id", "index", "position", "question", "choices", "images", "label", "category", "family",
             "magnitude", "magnitude_unit", "counterfactual", "keys", "model", "answer_type")
    assert {f: getattr(inspect, f) for f in facts} == {f: getattr(run, f) for f in facts}
    assert (inspect.index, inspect.family, inspect.magnitude, inspect.keys) == (7, "muller_lyer", 0.25,
                                                                                {"set_id": "3"})


def test_an_answer_from_another_solver_is_recorded_as_that_solver_s_and_scored():
    from trompe.samples import result_record

    record = result_record(logged(illusion_sample()), "m", "no", "they differ", False, "inspect", error="late")
    assert (record.answer, record.agent, record.correct, record.reasons, record.error, record.error_kind) == (
        "no", "inspect", False, "they differ", "late", None)
    assert record.scored and not record.right


def test_no_answer_is_a_failure_of_the_named_kind_with_the_solver_s_text_kept():
    from trompe.samples import result_record
    from trompe_agents.failures import ErrorKind

    meta = logged(illusion_sample())
    unnamed = result_record(meta, "m", None, "", None, "inspect", "no answer in the final text", reply="hmm")
    assert (unnamed.error_kind, unnamed.error, unnamed.reply, unnamed.answer, unnamed.agent) == (
        ErrorKind.NO_ANSWER, "no answer in the final text", "hmm", None, None)
    assert result_record(meta, "m", None, "", None, "inspect", "slow", kind="timeout").error_kind == ErrorKind.TIMEOUT
    assert result_record({**meta, "metadata": None}, "m", None, "", None, "x").index == "s7"  # no metadata: its id


# (format, task, gold, choices, answer type, final text) -> (answer, reasons) read from it
READS = [
    ("jsonl", 1, "yes", None, None, '{"reasons": "equal", "answer": "yes"}', ("yes", "equal")),
    ("jsonl", 1, "yes", None, None, '{"answer": "yes"}', ("yes", "")),  # no reasons given: none recorded
    # five options: E is an option letter, not out of A-D
    ("illusionvqa", 2, "E", list("abcde"), None, '{"reasons": "r", "answer": "E"}', ("E", "r")),
    # no JSON: the benchmark's own cue; BLINK names an option by its text
    ("blink", 2, "B", ["red", "green", "blue"], None, "The answer is green.", ("B", "")),
    ("jsonl", 2, "3", None, None, "Yes, 3.", ("3", "")),  # a count's gold picks the count in the text, not yes
]


@pytest.mark.parametrize(("fmt", "task", "gold", "choices", "kind", "text", "read"), READS)
def test_a_final_text_is_read_as_illusion_agent_reads_it(fmt, task, gold, choices, kind, text, read):
    from trompe.scorers import read_answer

    meta = {"format": fmt, "task": task, "answer": gold, "choices": choices, "answer_type": kind}
    assert read_answer(text, meta) == read


def test_a_record_trompe_s_solver_stored_is_the_one_scored():
    from trompe.samples import RECORD
    from trompe.scorers import record_of

    meta = logged(illusion_sample())
    stored = SampleResult.of_sample("s7", label="yes").with_answer("yes", "orchestrator", True)
    record = record_of(task_state(meta, "no", store={RECORD: stored.to_json()}))
    assert (record.answer, record.agent, record.correct) == ("yes", "orchestrator", True)


@pytest.mark.parametrize(("kind", "gold", "text", "answer", "right"), [
    (None, "yes", '{"reasons": "r", "answer": "no"}', "no", False),
    (None, "yes", '{"reasons": "r", "answer": "yes"}', "yes", True),
    ("integer", "1", '{"reasons": "r", "answer": 1}', "1", True),  # the item's type: gold 1 is a count, not yes
    ("integer", "0", '{"reasons": "r", "answer": 2}', "2", False),
])
def test_another_solver_s_text_is_scored_by_the_item_s_answer_type(kind, gold, text, answer, right):
    from trompe.scorers import record_of

    sample = Sample("s7", [Path("/i.png")], "How many?", gold, None, "count", {"index": 7}, None, kind)
    record = record_of(task_state(logged(sample), text))
    assert (record.answer, record.correct, record.agent, record.model, record.reasons, record.error) == (
        answer, right, "inspect", "mockllm/model", "r", None)


def test_a_final_text_without_an_answer_is_a_no_answer_failure_that_keeps_the_text():
    from trompe.scorers import record_of
    from trompe_agents.failures import ErrorKind

    meta = logged(illusion_sample())
    record = record_of(task_state(meta, "I cannot tell."))
    assert (record.error_kind, record.error, record.reply, record.correct) == (
        ErrorKind.NO_ANSWER, "no answer in the final text", "I cannot tell.", None)
    blank = record_of(task_state(meta, "  ", error="the model stopped"))
    assert (blank.error, blank.reply) == ("the model stopped", None)  # Inspect's error; no blank text kept
    late = record_of(task_state(meta, '{"reasons": "r", "answer": "yes"}', error="cut off"))
    assert (late.answer, late.correct, late.error) == ("yes", True, "cut off")


def test_the_metrics_are_accuracy_its_stderr_and_one_per_harness_scorer():
    from trompe.scorers import metrics_for
    from trompe_agents.datasets.scorers import scorers_for

    metrics = metrics_for("hallusionbench")
    assert len(metrics) == 2 + len(scorers_for("hallusionbench")) == 5
    assert len(metrics_for("jsonl")) == 3


def test_a_dataset_becomes_inspect_samples_with_the_question_images_and_sample(tmp_path, caplog):
    from inspect_ai.model import ContentImage, ContentText

    from trompe.samples import KEY, inspect_dataset, sample_metadata

    path = files.write_generic(tmp_path / "probes", 3)
    rows = [json.loads(line) for line in path.read_text().splitlines()]  # the first two with a benchmark index
    path.write_text("".join(json.dumps({**row, "metadata": {"index": 10 + i} if i < 2 else {}}) + "\n"
                            for i, row in enumerate(rows)))
    with caplog.at_level(logging.WARNING, logger="trompe.samples"):
        dataset, run = inspect_dataset(str(path), "jsonl", task=2)  # its answers are yes/no: Task I's form
    assert "--task 2" in caplog.text
    loaded = list(load_dataset(str(path), format="jsonl"))
    assert (dataset.name, dataset.location) == ("probes", str(path))
    assert [(s.id, s.target) for s in dataset] == [(s.id, s.answer) for s in loaded]
    for position, (item, sample) in enumerate(zip(dataset, loaded)):
        assert item.metadata == {KEY: sample_metadata(sample, position, "jsonl", 2)}
        [message] = item.input
        text, image = message.content
        assert isinstance(text, ContentText) and text.text.startswith(sample.question)
        assert isinstance(image, ContentImage) and image.image == str(sample.images[0])
    assert run == {"dataset": str(path), "format": "jsonl", "task": 2, "split": None, "labels": None,
                   "images_root": None, "counts": json.loads(json.dumps(load_dataset(str(path)).counts)),
                   "order": [["s0", 10], ["s1", 11], ["s2", "s2"]]}


def test_the_run_description_names_the_split_labels_and_images_root_given(tmp_path):
    from trompe.samples import inspect_dataset

    path = files.write_blink(tmp_path / "val-00000-of-00001.parquet", 2)
    dataset, run = inspect_dataset(str(path), "blink", images_root=str(tmp_path / "i"), split="val")
    assert {k: run[k] for k in ("format", "task", "split", "labels", "images_root")} == {
        "format": "blink", "task": 2, "split": "val", "labels": None, "images_root": str(tmp_path / "i")}
    images = [c.image for s in dataset for c in s.input[0].content if hasattr(c, "image")]
    assert images and all(Path(i).parent == tmp_path / "i" for i in images)  # written where it was asked
    assert [s.target for s in dataset] == [s.answer for s in load_dataset(str(path), format="blink")]
    assert [r[1] for r in run["order"]] == [(s.metadata or {}).get("index", s.id)
                                           for s in load_dataset(str(path), format="blink")]


def test_a_sample_whose_image_is_missing_is_asked_without_images_and_inline_images_are_data_urls(tmp_path):
    from trompe.samples import prompt_content

    image = Path(files.write_generic(tmp_path / "p", 1)).parent / "images" / "s0.png"
    sample = Sample("s0", [image], "Equal?", "yes", ["yes", "no"], "size", {}, None)
    inline = prompt_content(sample, inline=True)
    assert inline[0].text == prompt_content(sample)[0].text == "Equal?\n\nOptions:\nA. yes\nB. no"
    assert inline[1].image.startswith("data:image/png;base64,")
    assert [type(c).__name__ for c in prompt_content(replace(sample, error="missing"))] == ["ContentText"]


@pytest.mark.parametrize("fmt, options, refused", [
    ("hallusionbench", {}, "missing column 'category'"),  # read as the format named, not as detected
    ("blink", {"split": "test"}, "has no split 'test'"),
    ("blink", {"task": 1}, "is a blink dataset, which is Task 2"),
])
def test_a_dataset_is_read_as_the_task_arguments_say_or_refused(tmp_path, fmt, options, refused):
    from trompe.samples import inspect_dataset
    from trompe_agents.datasets.base import DatasetError

    path = files.write_blink(tmp_path / "val-00000-of-00001.parquet", 2)
    with pytest.raises(DatasetError, match=refused):
        inspect_dataset(str(path), fmt, images_root=str(tmp_path / "i"), **options)


def test_a_task_that_contradicts_a_plain_file_s_answers_is_logged_naming_the_file(tmp_path, caplog):
    from trompe.samples import inspect_dataset

    path = files.write_generic(tmp_path / "probes", 2)
    with caplog.at_level(logging.WARNING):
        inspect_dataset(str(path), "jsonl", task=2)
    [warning] = caplog.records
    assert warning.name == "trompe.samples" and f"--task 2: every answer is yes/no in {path}" in warning.message


def test_labels_joined_from_a_file_are_the_targets_and_an_unlabelled_sample_has_none(tmp_path):
    from trompe.samples import inspect_dataset

    path = files.write_generic(tmp_path / "probes", 3)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**row, "answer": None}) + "\n" for row in rows))
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"s0": "yes", "s2": "no"}))
    unlabelled, _ = inspect_dataset(str(path), "jsonl", task=1)
    assert [s.target for s in unlabelled] == ["", "", ""]
    dataset, run = inspect_dataset(str(path), "jsonl", labels=str(labels), task=1)
    assert [s.target for s in dataset] == ["yes", "", "no"] and run["labels"] == str(labels)


def test_a_datacv_task_one_gold_1_is_yes_for_another_solver_s_answer():
    """DataCV Task I writes yes/no golds as 1/0 and its items name no answer type: the task reads them."""
    from trompe.scorers import record_of

    sample = Sample("0", [Path("/i.png")], "Equal?", "1", None, None, {"index": 0}, None)
    meta = logged(sample, fmt="datacv1", task=1)
    assert meta["answer_type"] is None
    record = record_of(task_state(meta, '{"reasons": "r", "answer": "yes"}'))
    assert (record.answer, record.correct) == ("yes", True)


def test_each_harness_metric_is_that_scorer_s_numbers_over_the_records():
    from inspect_ai.scorer import SampleScore, Score

    from trompe.scorers import metrics_for
    from trompe_agents.datasets.metrics import benchmark_metrics
    from trompe_agents.datasets.scorers import scorers_for

    def record(i: int, gold: str, answer: str, category: str) -> SampleResult:
        return SampleResult.of_sample(f"v{i}", label=gold, category=category, choices=["a", "b", "c", "d"],
                                      answer_type="choice:4").with_answer(answer, "main", gold == answer)

    records = [record(0, "A", "A", "direct_attributes"), record(1, "B", "A", "direct_attributes"),
               record(2, "C", "C", "relative_position")]
    scores = [SampleScore(score=Score(value="C", metadata={"record": r.to_json()})) for r in records]
    values = {}
    for metric in metrics_for("vstar")[2:]:
        values.update(metric(scores))
    expected = {}
    for scorer in scorers_for("vstar"):
        prefix = "" if scorer == "official" else f"{scorer} "
        numbers = benchmark_metrics("vstar", records, scorer)
        expected.update({prefix + k: v for k, v in numbers.headline.items() if k != "accuracy"})
        expected.update({f"{prefix}category {name}": right for name, right, _ in numbers.groups})
    assert values == expected and values["category direct_attributes"] == 0.5
