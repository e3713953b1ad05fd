"""A run folder is one experiment: a resume with another model, setting, dataset or probe seed is refused in one
line naming what differs; --allow-change continues across another --limit only; every line carries its sample's
content hash and the run's key, and `report` refuses a folder whose lines come from two runs."""

from __future__ import annotations

import dataclasses
import json

import pytest
from PIL import Image

from trompe_agents.backends.function import FunctionBackend
from trompe_agents.datasets import load_dataset
from trompe_agents.datasets.base import Sample
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.datasets.content import sample_digest
from trompe_agents.illusion.identity import SCORERS, differences
from trompe_agents.illusion.report import write_report
from trompe_agents.illusion.submit import write_submission
from trompe_agents.illusion.results import RESULTS
from runlines import written
from trompe_agents.illusion.runmeta import META, read_meta
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.probes import generate
from trompe_agents.toolclient import ToolClient

CONFIG = AgentConfig(task=1, router="regex")


def decide(messages, tools):
    return {"reasons": "looked", "answer": "yes"}


def dataset(tmp_path, n: int = 4, colour: str = "white") -> list[Sample]:
    image = tmp_path / f"{colour}.png"
    Image.new("RGB", (24, 24), colour).save(image)
    return [Sample(f"s{i}", [image], f"Is line {i} straight?", answer="yes" if i % 2 else "no",
                   category="line straightness") for i in range(n)]


async def run(samples, out, model="mymodel:decide", config=CONFIG, **options):
    async with ToolClient.in_process() as tools:
        return await run_samples(samples, FunctionBackend(decide, model), tools, config,
                                 RunOptions(out=out, concurrency=1, progress=False, **options))


async def test_another_model_is_refused_in_one_line_and_nothing_is_added(tmp_path):
    samples, out = dataset(tmp_path), tmp_path / "run"
    await run(samples[:2], out)
    before = (out / RESULTS).read_text()
    with pytest.raises(ValueError) as refused:
        await run(samples[:2], out, model="honest:decide")
    message = str(refused.value)
    assert message == (f"{out} holds another run: model (mymodel:decide -> honest:decide); start a new folder with "
                       "another --out")
    assert (out / RESULTS).read_text() == before and read_meta(out)["model"] == "mymodel:decide"


@pytest.mark.parametrize("change, named", [
    ({"settings": {"thinking": "high"}}, "settings.thinking (null -> high)"),
    ({"config": AgentConfig(task=1, router="regex", max_rounds=4)}, "max_rounds (10 -> 4)"),
    ({"config": AgentConfig(task=1, router="regex", no_tools=True)}, "no_tools (false -> true)"),
    ({"config": AgentConfig(task=1, router="regex", allow=["crop"])}, "; tools.names (-"),
])
async def test_a_changed_setting_is_refused_naming_the_field(tmp_path, change, named):
    samples, out = dataset(tmp_path), tmp_path / "run"
    await run(samples, out, settings={"thinking": None})
    options = {"settings": {"thinking": None}, **change}
    config = options.pop("config", CONFIG)
    with pytest.raises(ValueError, match="holds another run: ") as refused:
        await run(samples, out, config=config, **options)
    assert named in str(refused.value)
    assert "--allow-change" not in str(refused.value)  # none of these is a harmless change


async def test_the_same_command_resumes_and_lines_carry_content_and_run_key(tmp_path):
    samples, out = dataset(tmp_path), tmp_path / "run"
    await run(samples[:2], out, limit=None)
    records = await run(samples[:2], out)  # nothing differs: a plain resume, nothing answered twice
    assert len((out / RESULTS).read_text().splitlines()) == 2
    meta = read_meta(out)
    for sample in samples[:2]:
        assert records[sample.id].content == sample_digest(sample)
        assert records[sample.id].run == meta["run_key"]
    fingerprint = meta["fingerprint"]
    assert {"dataset", "task", "answers", "backend", "model", "settings", "prompts", "tools", "router", "scorer",
            "trompe"} <= set(fingerprint)
    assert fingerprint["dataset"]["samples"] == 2 and fingerprint["model"] == "mymodel:decide"
    assert fingerprint["dataset"]["answer_types"] == {"yesno": 2}
    assert fingerprint["scorer"] == SCORERS[1] and fingerprint["answers"] == "yes/no"
    assert "draw_line" in fingerprint["tools"]["names"]


async def test_a_larger_limit_needs_allow_change_and_then_keeps_the_answered_samples(tmp_path):
    samples, out = dataset(tmp_path), tmp_path / "run"
    await run(samples, out, limit=2)
    with pytest.raises(ValueError, match=r"dataset\.samples \(2 -> 4\).*or pass --allow-change dataset"):
        await run(samples, out)
    records = await run(samples, out, allow_change=("dataset",))
    lines = (out / RESULTS).read_text().splitlines()
    assert len(lines) == 4 and set(records) == {s.id for s in samples}
    allowed = read_meta(out)["invocations"][-1]["allowed_changes"]
    assert "dataset.samples (2 -> 4)" in allowed and "dataset.answer_types.yesno (2 -> 4)" in allowed


async def test_allow_change_never_covers_other_images_under_the_same_ids(tmp_path):
    out = tmp_path / "run"
    await run(dataset(tmp_path, colour="white"), out, limit=2)
    with pytest.raises(ValueError) as refused:  # same ids, other pixels: not another --limit of the same list
        await run(dataset(tmp_path, colour="black"), out, allow_change=("dataset",))
    assert "2 answered samples have other images, question, options, answer type or label now (s0, s1)" in \
        str(refused.value)
    assert len(written(out)) == 2


async def test_another_answer_type_for_the_same_items_is_refused_naming_the_counts(tmp_path):
    """The same images, questions and labels asked for another answer form (its schema and instruction are sent)
    are other samples: refused by name, and --allow-change dataset does not cover answered ones."""
    out = tmp_path / "run"
    await run(dataset(tmp_path), out)
    asked_as_text = [dataclasses.replace(s, answer_type="string") for s in dataset(tmp_path)]
    with pytest.raises(ValueError) as refused:
        await run(asked_as_text, out)
    assert "dataset.answer_types.string (null -> 4); dataset.answer_types.yesno (4 -> null)" in str(refused.value)
    with pytest.raises(ValueError, match="4 answered samples have other images, question, options, answer type"):
        await run(asked_as_text, out, allow_change=("dataset",))
    assert len((out / RESULTS).read_text().splitlines()) == 4


async def test_another_probe_seed_is_refused_although_the_families_and_count_match(tmp_path):
    sets = {}
    for seed in (0, 1):
        generate("illusions", families=["ebbinghaus", "hering"], n=4, seed=seed, size=96,
                 out=tmp_path / f"seed{seed}", progress=False)
        sets[seed] = list(load_dataset(tmp_path / f"seed{seed}"))
    out = tmp_path / "runs" / "seed0"
    await run(sets[0], out)
    with pytest.raises(ValueError, match=r"holds another run: dataset\.sha256 \(") as refused:
        await run(sets[1], out, allow_change=("dataset",))
    assert "--allow-change" not in str(refused.value)  # another list of samples: no flag makes it harmless
    assert set(written(out)) == {s.id for s in sets[0]}


def test_allow_change_accepts_only_the_documented_fields(tmp_path):
    with pytest.raises(ValueError, match="allow-change: model cannot change within a run; accepted: dataset, trompe"):
        RunOptions(out=tmp_path, allow_change=("model",))


async def test_a_folder_written_before_fingerprints_still_refuses_another_model(tmp_path):
    samples, out = dataset(tmp_path), tmp_path / "run"
    await run(samples, out)
    meta = json.loads((out / META).read_text())
    for key in ("fingerprint", "run_key", "trompe"):
        del meta[key]
    (out / META).write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=r"model \(mymodel:decide -> honest:decide\)"):
        await run(samples, out, model="honest:decide")
    await run(samples, out)  # the same model resumes, and the folder gets its fingerprint
    assert "fingerprint" in read_meta(out)


async def test_report_and_submit_refuse_a_folder_whose_answers_come_from_two_runs(tmp_path):
    samples, out = dataset(tmp_path), tmp_path / "run"
    await run(samples[:2], out)
    lines = (out / RESULTS).read_text().splitlines()
    mixed = json.loads(lines[1]) | {"run": "0123456789ab", "model": "honest:decide"}  # as an old mixing resume left
    (out / RESULTS).write_text(lines[0] + "\n" + json.dumps(mixed) + "\n")
    with pytest.raises(ValueError, match=r"lines from 2 runs: .*mymodel:decide.*honest:decide"):
        write_report(out)
    with pytest.raises(ValueError, match=r"lines from 2 runs: .*; keep each run in a folder of its own"):
        write_submission(out)


def test_differences_name_nested_fields_and_list_changes():
    before = {"model": "a", "settings": {"thinking": None, "options": {"temperature": 0}}, "tags": ["core"]}
    now = {"model": "a", "settings": {"thinking": None, "options": {"temperature": 1}}, "tags": ["core", "draw"]}
    assert [text for _, text in differences(before, now)] == ["settings.options.temperature (0 -> 1)",
                                                              "tags (+draw)"]
