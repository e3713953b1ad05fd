"""Pages and compare.json a user (or a later command) reads are replaced whole: a write that fails half-way, here
one over the process's file-size limit (RLIMIT_FSIZE, the kernel's own EFBIG as a full disk gives ENOSPC), leaves
the previous files as they were, and the command says so in one line."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from diskkit import no_file_may_grow

from runlines import write_run
from trompe_agents.illusion.compare import compare_runs, write_compare
from trompe_agents.illusion.report import write_report
from trompe_agents.traceview import write_html
from trompe_agents.trace import Trace


def answered_run(folder: Path, answers: list[str]) -> Path:
    """A run folder of Task I answers to four labelled samples, each with a one-event trace."""
    for i, answer in enumerate(answers):
        Trace(folder / "traces" / f"s{i}").event("final", "main", answer=answer)
    return write_run(folder, [{"id": f"s{i}", "agent": "main", "content": f"c{i}", "answer": answer, "label": "yes",
                               "correct": answer == "yes", "trace": f"traces/s{i}"}
                              for i, answer in enumerate(answers)])

def contents(paths: list[Path]) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in paths}


@pytest.fixture
def runs(tmp_path) -> tuple[Path, Path]:
    return answered_run(tmp_path / "a", ["yes"] * 4), answered_run(tmp_path / "b", ["yes", "no", "yes", "no"])


def test_a_failed_compare_leaves_the_previous_page_and_compare_json(runs):
    html = write_compare(compare_runs(*runs), runs[1] / "report" / "compare.html")
    before = contents([html, html.with_suffix(".json")])
    with no_file_may_grow(), pytest.raises(OSError, match="File too large"):
        write_compare(compare_runs(*runs), html)
    assert contents(list(before)) == before
    assert json.loads(html.with_suffix(".json").read_text())["mcnemar"]["pairs"] == 4
    assert not [p.name for p in html.parent.iterdir() if p.name.endswith(".tmp")]  # no temp file left either


def test_a_failed_report_leaves_the_previous_index_and_sample_pages(runs):
    index = write_report(runs[1])
    pages = [index, *sorted((index.parent / "samples").glob("*.html"))]
    before = contents(pages)
    with no_file_may_grow(), pytest.raises(OSError, match="File too large"):
        write_report(runs[1])
    assert contents(pages) == before and all(before.values())


def test_a_failed_trace_page_leaves_the_previous_one(runs):
    page = write_html(runs[0])
    before = page.read_bytes()
    with no_file_may_grow(), pytest.raises(OSError, match="File too large"):
        write_html(runs[0])
    assert page.read_bytes() == before and b"final answer from" in before


def test_compare_says_a_failed_write_in_one_line_and_keeps_compare_json(runs):
    """The command as a user runs it, in a process of its own whose file-size limit the test sets."""
    html = write_compare(compare_runs(*runs), runs[1] / "report" / "compare.html")
    before = contents([html, html.with_suffix(".json")])

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    done = subprocess.run([sys.executable, "-m", "trompe_agents.illusion.cli", "compare", *map(str, runs)],
                          capture_output=True, text=True, preexec_fn=limit, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]  # one line, no traceback
    assert done.stderr.startswith("illusion-agent compare: [Errno 27] File too large")
    assert contents(list(before)) == before
