"""Benchmarks through the commands a person types: illusion-agent run/report/submit and trompe dataset.

Every dataset here is written to its public layout by trompe_agents.testing.dataset_files (each writer's
docstring names the source file or dataset card); the agent is a scripted function backend.
"""

from __future__ import annotations

import json

import pytest

from trompe_agents.cli import main as trompe
from trompe_agents.datasets.load import load_dataset
from trompe_agents.illusion.cli import main as illusion_agent
from runlines import written
from trompe_agents.testing import dataset_files as files

SCRIPTED = ["--backend", "function", "--no-progress"]
FAILED = 3  # the run finished, but some samples have no answer (their failures are recorded and counted)


pytestmark = pytest.mark.usefixtures("scripted_on_path")  # tests/conftest.py: the scripted models on sys.path


def test_datacv_task2_ids_from_image_names_missing_image_fails_alone_and_submit_writes_model_json(
        tmp_path, capsys):
    """A subset of Task II (images 3, 7, 9, 12; 9 missing) keeps its real ids; 9 becomes -1, the run goes on."""
    path = files.write_datacv2(tmp_path / "task2", 4, ids=[3, 7, 9, 12])
    (tmp_path / "task2" / "images" / "9.png").unlink()
    out = tmp_path / "run"
    assert illusion_agent(["run", "--dataset", str(path), "--images-root", str(tmp_path / "task2" / "images"),
                           "--out", str(out), "--model", "scripted_answers:always_b", *SCRIPTED]) == FAILED
    err = capsys.readouterr().err
    assert "4 samples from" in err and "(datacv2, Task 2)" in err and "1 with a missing image (will fail)" in err
    records = written(out)
    assert sorted(records) == ["12", "3", "7", "9"]
    assert "image file not found" in records["9"]["error"] and records["3"]["answer"] == "B"
    assert illusion_agent(["submit", str(out)]) == 0
    assert (out / "submission_datacv_task2.txt").read_text().splitlines() == ["3 1", "7 1", "9 -1", "12 1"]
    model = json.loads((out / "model.json").read_text())
    assert model["model"] == "scripted_answers:always_b"
    assert model["parameters"]["task"] == 2 and model["parameters"]["backend"] == "function"


def test_a_task_that_contradicts_the_dataset_format_is_refused(tmp_path):
    path = files.write_datacv2(tmp_path, 2)
    with pytest.raises(SystemExit, match=r"--task 1: .*test.json is a datacv2 dataset, which is Task 2"):
        illusion_agent(["run", "--dataset", str(path), "--task", "1", "--images-root", str(tmp_path / "images"),
                        "--out", str(tmp_path / "run"), "--model", "scripted_answers:always_b", *SCRIPTED])


def test_hallusionbench_run_prints_and_reports_the_official_metrics(tmp_path, capsys):
    """Always 'yes' on 8 questions (gold alternates no/yes); the two text-only VS questions (gold yes) are
    answered from their text. Official: aAcc 4/8, qAcc 2/6, fAcc 2/6 (VS figure 0 left out); lmms-eval scores
    the image split only (the 6 VD questions, gold no yes no no yes no): aAcc 2/6, qAcc 0/4 (every pair holds
    a "no"), fAcc 2/6."""
    path = files.write_hallusionbench(tmp_path / "hb", 8)
    out = tmp_path / "run"
    assert illusion_agent(["run", "--dataset", str(path), "--out", str(out),
                           "--model", "scripted_answers:always_yes", *SCRIPTED]) == 0
    printed = capsys.readouterr().out
    assert "aAcc 50.0%, qAcc 33.3%, fAcc 33.3%" in printed and "tianyi-lab/HallusionBench utils.py" in printed
    assert "8 scored, 0 of them failed" in printed
    assert illusion_agent(["report", str(out)]) == 0
    html = (out / "report" / "index.html").read_text()
    assert "Benchmark metrics" in html and "<th>qAcc</th><td>33.3%</td>" in html
    assert illusion_agent(["report", str(out), "--scorer", "lmms-eval"]) == 0
    html = (out / "report" / "index.html").read_text()
    assert "Scorer <b>lmms-eval</b>" in html
    assert "<th>aAcc</th><td>33.3%</td>" in html and "<th>qAcc</th><td>0.0%</td>" in html


def info(capsys, *args: str) -> str:
    assert trompe(["dataset", "info", *map(str, args)]) == 0
    return capsys.readouterr().out


def test_blink_snapshot_reads_the_labelled_val_split_unless_told(tmp_path, capsys):
    snap = files.write_blink_snapshot(tmp_path / "blink", 3)
    shown = info(capsys, snap, "--images-root", tmp_path / "c")
    assert "blink, split val, 3 samples" in shown and "unlabelled" not in shown
    shown = info(capsys, snap, "--split", "test", "--images-root", tmp_path / "c")
    assert "split test, 3 samples; 3 unlabelled (not scored)" in shown
    assert "6 samples; 3 unlabelled" in info(capsys, snap, "--split", "all", "--images-root", tmp_path / "c")
    assert trompe(["dataset", "info", str(snap), "--split", "dev", "--images-root", str(tmp_path / "c")]) == 2
    assert "--split: " in capsys.readouterr().err


def test_illusionvqa_snapshot_reads_test_with_up_to_eight_options(tmp_path, capsys):
    snap = files.write_illusionvqa_snapshot(tmp_path / "ivqa", 8)
    shown = info(capsys, snap, "--images-root", tmp_path / "c")
    assert "illusionvqa, split test, 8 samples" in shown and "options per sample: 8: 8" in shown
    assert "answers: A 1, B 1, C 1, D 1, E 1, F 1, G 1, H 1" in shown
    assert "illusion agent task: 2" in shown


def test_illusionvqa_repository_json_resolves_image_path_under_images_root(tmp_path, capsys):
    path = files.write_illusionvqa_json(tmp_path / "ivqa", 3)
    assert trompe(["dataset", "info", str(path)]) == 2
    assert "comprehension.json: item 0 (id '0'): image not found" in capsys.readouterr().err
    assert "3 samples" in info(capsys, path, "--images-root", tmp_path / "ivqa" / "data")


def test_vstar_questions_need_the_benchmark_folder(tmp_path, capsys):
    path = files.write_vstar(tmp_path, 4)
    assert trompe(["dataset", "info", str(path)]) == 2
    err = capsys.readouterr().err
    assert "test_questions.jsonl: line 1 (question_id '0'), image: file not found" in err and "--images-root" in err
    shown = info(capsys, path, "--images-root", tmp_path / "V_star bench")
    assert "vstar, 4 samples" in shown and "options per sample: 2: 2, 4: 2" in shown
    assert "direct_attributes: 2" in shown


def test_tet_row_without_image_bytes_is_counted_and_fails_alone(tmp_path, capsys):
    path = files.write_tet(tmp_path / "colorblindhard-00000-of-00001.parquet", 4, without_bytes=(2,))
    shown = info(capsys, path, "--images-root", tmp_path / "c")
    assert "tet, split colorblindhard, 4 samples; 1 with a missing image (will fail)" in shown
    assert trompe(["dataset", "convert", str(path), "--images-root", str(tmp_path / "c"),
                   "--out", str(tmp_path / "conv")]) == 0
    assert len((tmp_path / "conv" / "probes.jsonl").read_text().splitlines()) == 3
    converted = load_dataset(tmp_path / "conv")  # its images beside it: loads without --allow-images-outside
    assert len(converted) == 3 and all(p.parent == (tmp_path / "conv" / "images").resolve()
                                       for s in converted for p in s.images)


def test_lmms_lab_hallusionbench_parquet_keeps_both_splits(tmp_path, capsys):
    folder = files.write_hallusionbench_lmms(tmp_path / "lmms", 8)
    shown = info(capsys, folder, "--images-root", tmp_path / "c")
    assert "hallusionbench" in shown and "8 samples" in shown and "illusion agent task: 1" in shown
    assert "6 samples" in info(capsys, folder, "--split", "image", "--images-root", tmp_path / "c")


@pytest.mark.parametrize("make, fmt, message", [
    (lambda d: d / "x.parquet", None, r"x.parquet: not a readable parquet file"),
    (lambda d: files.write_blindtest(d / "valid.parquet", 2), "blink", r"valid.parquet: missing column 'idx'"),
    (lambda d: files.write_datacv1(d, 2), "datacv2", r"test.csv: not valid JSON"),
    (lambda d: files.write_vstar(d, 1), "illusionvqa", r"test_questions.jsonl: item 0 .*missing column 'question'"),
    (lambda d: files.write_tet(d / "t.parquet", 1), "vstar", r"t.parquet: not UTF-8 text"),
])
def test_wrong_or_guessed_formats_name_the_file(tmp_path, capsys, make, fmt, message):
    (tmp_path / "x.parquet").write_bytes(b"not parquet")
    path = make(tmp_path)
    assert trompe(["dataset", "info", str(path), *(["--format", fmt] if fmt else [])]) == 2
    assert __import__("re").search(message, capsys.readouterr().err)


def test_unlabelled_blink_test_rows_run_but_are_never_scored(tmp_path, capsys):
    snap = files.write_blink_snapshot(tmp_path / "blink", 3)
    out = tmp_path / "run"
    assert illusion_agent(["run", "--dataset", str(snap), "--split", "all", "--images-root", str(tmp_path / "c"),
                           "--out", str(out), "--model", "scripted_answers:always_b", *SCRIPTED]) == 0
    captured = capsys.readouterr()
    assert "6 samples" in captured.err and "3 unlabelled (not scored)" in captured.err
    assert "3 scored, 0 of them failed, 3 unlabelled (not scored)" in captured.out
    records = written(out)
    assert sorted(r["correct"] is None for r in records.values()) == [False] * 3 + [True] * 3
