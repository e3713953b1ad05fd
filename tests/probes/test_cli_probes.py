"""`trompe probes list|generate` as a user runs it."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from PIL import Image

from trompe_agents.cli import main
from trompe_agents.datasets import load_dataset
from trompe_agents.probes import generate, list_families


def test_list_shows_every_family_and_filters_by_suite(capsys):
    assert main(["probes", "list"]) == 0
    everything = capsys.readouterr().out
    for fam in list_families():
        assert fam.name in everything
    assert main(["probes", "list", "--suite", "blindtest"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(f.name for f in list_families("blindtest"))
    assert all(" blindtest " in line for line in lines)


def test_generate_writes_pngs_and_a_jsonl_that_loads_back(tmp_path, capsys):
    out = tmp_path / "set"
    code = main(["probes", "generate", "--suite", "blindtest", "--families", "touching_circles,nested_squares",
                 "--n", "6", "--seed", "4", "--size", "200", "--out", str(out), "--quiet"])
    assert code == 0
    assert "wrote 6 probes" in capsys.readouterr().out
    pngs = sorted((out / "images").glob("*.png"))
    assert len(pngs) == 6 and all(Image.open(p).size == (200, 200) for p in pngs)
    loaded = list(load_dataset(out))
    expected = generate("blindtest", ["touching_circles", "nested_squares"], n=6, seed=4, size=200,
                        out=tmp_path / "direct", progress=False)
    for got, want in zip(loaded, expected, strict=True):
        assert got.images[0].read_bytes() == want.images[0].read_bytes()
        assert (got.id, got.question, got.answer, got.category, got.metadata) == (
            want.id, want.question, want.answer, want.category, want.metadata)


def test_jpeg_quality_option_writes_jpegs(tmp_path):
    assert main(["probes", "generate", "--suite", "blindtest", "--n", "2", "--size", "128",
                 "--jpeg-quality", "30", "--out", str(tmp_path), "--quiet"]) == 0
    assert [p.suffix for p in sorted((tmp_path / "images").iterdir())] == [".jpg", ".jpg"]


@pytest.mark.parametrize("argv, message", [
    (["--families", "nope"], "nope"), (["--size", "12"], "size"), (["--balance", "2"], "balance"),
])
def test_bad_input_is_one_clear_line_and_status_2(tmp_path, capsys, argv, message):
    code = main(["probes", "generate", "--suite", "blindtest", "--n", "2", "--out", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("trompe: error:") and message in err
    assert "Traceback" not in err


def test_out_naming_a_file_is_a_clear_error_and_the_file_is_kept(tmp_path, capsys):
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    assert main(["probes", "generate", "--suite", "blindtest", "--n", "2", "--out", str(taken), "--quiet"]) == 2
    assert f"trompe: error: out: {taken} is a file" in capsys.readouterr().err
    assert taken.read_text() == "mine"


def test_console_script_runs_with_a_progress_bar(tmp_path):
    exe = shutil.which("trompe") or shutil.which("trompe", path=str(sys.prefix) + "/bin")
    if exe is None:
        pytest.skip("trompe console script not installed")
    done = subprocess.run([exe, "probes", "generate", "--suite", "blindtest", "--n", "3", "--size", "128",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "3/3" in done.stderr  # tqdm's bar
    assert (tmp_path / "probes.jsonl").read_text().count("\n") == 3
