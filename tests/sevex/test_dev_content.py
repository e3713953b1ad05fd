"""SEVEX's dev/test split matches on id and content: `apply` leaves out the items the prompt was found on, keeps
(and names) a sample that only shares an id with one, and `explore --resume` refuses dev items that changed."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from trompe_agents.sevex.cli import main

pytestmark = pytest.mark.os_sandbox  # runs generated code through the OS sandbox

MODELS = ["--target-backend", "function", "--target-model", "scripted_models:target", "--no-progress"]


def explore(run, dev_set, *extra: str) -> int:
    return main(["explore", "--task", "probes", "--dev", str(dev_set), "--out", str(run), *MODELS,
                 "--explorer-backend", "function", "--explorer-model", "scripted_models:explorer", *extra])


def test_apply_keeps_and_names_samples_that_only_share_an_id_with_a_dev_sample(tmp_path, dev_set, capsys):
    run = tmp_path / "run"
    assert explore(run, dev_set, "--iterations", "0", "--dev-size", "4") == 0
    recorded = json.loads((run / "run.json").read_text())
    dev_ids = recorded["dev_ids"]
    assert set(recorded["dev_content"]) == set(dev_ids)
    assert json.loads((run / "best" / "meta.json").read_text())["dev_content"] == recorded["dev_content"]
    redrawn = sorted(dev_ids)[:2]
    for sample_id in redrawn:  # same ids and questions, other pixels: another item
        Image.new("RGB", (64, 32), "blue").save(dev_set.parent / f"{sample_id}.png")
    capsys.readouterr()
    out = tmp_path / "applied.jsonl"
    assert main(["apply", str(run), "--dataset", str(dev_set), *MODELS, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "left out 2 development samples of the run" in err
    assert (f"kept 2 samples that share an id with a development sample but hold other images, question or "
            f"options ({', '.join(redrawn)})") in err
    applied = {json.loads(line)["id"] for line in out.read_text().splitlines()}
    assert applied == (set(f"s{i}" for i in range(6)) - set(dev_ids)) | set(redrawn)


def test_explore_resume_refuses_dev_samples_whose_images_changed(tmp_path, dev_set, capsys):
    run = tmp_path / "run"
    assert explore(run, dev_set, "--iterations", "0", "--dev-size", "4") == 0
    changed = sorted(json.loads((run / "run.json").read_text())["dev_ids"])[0]
    Image.new("RGB", (64, 32), "blue").save(dev_set.parent / f"{changed}.png")
    before = (run / "state.json").read_text()
    capsys.readouterr()
    assert explore(run, dev_set, "--iterations", "1", "--resume") != 0
    assert (f"sevex: --resume: the run's dev samples {changed} hold other images, question or options now; start "
            "a new run with another --out") in capsys.readouterr().err
    assert (run / "state.json").read_text() == before  # nothing explored on the changed items
