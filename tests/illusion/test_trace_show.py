"""`illusion-agent trace show`: a run's trace read by a person, as text in the terminal or as one HTML page."""

import re

import pytest

from trompe_agents.illusion.cli import main
from runlines import written



pytestmark = pytest.mark.usefixtures("scripted_on_path")  # tests/conftest.py: the scripted models on sys.path


@pytest.fixture
def run_dir(probe_dir, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--dataset", str(probe_dir), "--task", "1", "--out", str(out), "--limit", "2",
                 "--backend", "function", "--model", "scripted:line_then_yes", "--no-progress",
                 "--router", "regex"]) == 0
    capsys.readouterr()
    return out


def test_text_shows_every_sample_with_its_tool_calls_arguments_and_image_ids(run_dir, capsys):
    assert main(["trace", "show", str(run_dir)]) == 0
    text = capsys.readouterr().out
    samples = sorted(written(run_dir))
    assert [f"=== sample {s} ===" in text for s in samples] == [True, True]
    assert text.count("-> draw_line({") == 2, text
    assert re.search(r"TOOL_RESULT draw_line\s+\[images: img_001\]", text), text
    assert "FINAL" in text and '"answer": "yes"' in text


def test_one_sample_of_a_run_and_a_sample_folder_show_the_same_trace(run_dir, capsys):
    sample = sorted(written(run_dir))[1]
    assert main(["trace", "show", str(run_dir), "--sample", sample]) == 0
    by_name = capsys.readouterr().out
    assert main(["trace", "show", str(run_dir / written(run_dir)[sample]["trace"] / "trace.jsonl")]) == 0
    assert capsys.readouterr().out == by_name
    assert "=== sample" not in by_name and "draw_line" in by_name


def test_html_page_links_every_image_the_model_saw(run_dir, tmp_path, capsys):
    target = tmp_path / "pages" / "trace.html"
    assert main(["trace", "show", str(run_dir), "--html", str(target)]) == 0
    assert str(target) in capsys.readouterr().out
    html = target.read_text(encoding="utf-8")
    sources = re.findall(r"<img class='chain' src='([^']+)'", html)
    assert len(sources) == 4  # per sample: the original and the line drawn on it
    assert all((target.parent / s).is_file() for s in sources), sources
    assert html.count("<details id='s-") == 2 and "draw_line" in html


def test_unknown_sample_or_folder_is_one_line(run_dir, tmp_path):
    with pytest.raises(SystemExit, match="no trace for sample 'nope'"):
        main(["trace", "show", str(run_dir), "--sample", "nope"])
    with pytest.raises(SystemExit, match="no trace.jsonl here and no traces/ folder"):
        main(["trace", "show", str(tmp_path)])
