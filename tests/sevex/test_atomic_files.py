"""What SEVEX leaves for a user to keep (a best/ prompt folder, a results.jsonl) is replaced whole: a write that
fails half-way (the kernel's EFBIG under RLIMIT_FSIZE, as a full disk gives ENOSPC) leaves the previous files."""

from __future__ import annotations

import pytest
from diskkit import no_file_may_grow
from sevex_support import sevex_result

from trompe_agents.failures import ErrorKind
from trompe_agents.runfolder import RunFolder
from trompe_agents.sevex.evaluate import write_results
from trompe_agents.sevex.prompt_dir import PromptDir
from trompe_agents.sevex.tree import Implementation


def test_a_failed_save_of_a_prompt_folder_leaves_the_previous_prompt_whole(tmp_path):
    old = PromptDir(Implementation("def visual_prompt(images):\n    return images\n", "Look at the lines."),
                    {"task": "count", "node": 3})
    old.save(tmp_path)
    new = PromptDir(Implementation("def visual_prompt(images):\n    return []\n" * 200, "Count the circles." * 200),
                    {"task": "count", "node": 7})
    with no_file_may_grow(), pytest.raises(OSError, match="File too large"):
        new.save(tmp_path)
    again = PromptDir.load(tmp_path)
    assert again.implementation == old.implementation and again.meta == old.meta
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json", "prompt.md", "visual_prompt.py"]


def test_a_failed_write_of_results_leaves_the_previous_lines(tmp_path):
    path = tmp_path / "results.jsonl"
    first = [sevex_result("a", "3", "3", True), sevex_result("b", None, "2", error="crashed", kind=ErrorKind.CRASHED)]
    write_results(RunFolder(tmp_path), "results.jsonl", first)
    before = path.read_bytes()
    with no_file_may_grow(), pytest.raises(OSError, match="File too large"):
        write_results(RunFolder(tmp_path), "results.jsonl", [sevex_result(f"s{i}", "1", "1", True) for i in range(500)])
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["results.jsonl"]
