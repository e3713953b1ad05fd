"""A run folder cannot be turned against its user: a link planted as one of its files or folders (`run.lock`,
`results.jsonl`, `run.json`, `traces`, `report`, SEVEX's `nodes` and `best`) is refused with one line naming it,
and nothing is read or written through it; the lock writes only into a lock file.

Run as root (CI runs so) these cases run again as user `nobody` (test_as_nobody_too): a run folder on a shared
disk is where someone else can plant the link.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from unprivileged import run_as_nobody, site_prelude

from trompe_agents.illusion.cli import main
from trompe_agents.runfolder import LinkRefused, RunFolder
from trompe_agents.sevex.evaluate import write_results
from trompe_agents.sevex.prompt_dir import PromptDir

PROJECT = Path(__file__).resolve().parents[2]
SCRIPTED = ["--backend", "function", "--model", "scripted:line_then_yes", "--no-progress", "--limit", "2"]
CONTENT = "do not touch\n"


def planted(tmp_path: Path, name: str, kind: str = "file") -> tuple[Path, Path]:
    """A run folder whose `name` is a link to a file (or folder) outside it; (the folder, the link's target)."""
    out = tmp_path / "run"
    (out / name).parent.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "important"
    if kind == "file":
        target.write_text(CONTENT)
    else:
        target.mkdir()
    (out / name).symlink_to(target)
    return out, target


def untouched(target: Path) -> bool:
    return target.read_text() == CONTENT if target.is_file() else list(target.iterdir()) == []


def refused(message: str, link: Path) -> bool:
    return message.count("\n") == 0 and f"{link}: a symbolic link or not a " in message


@pytest.mark.parametrize("name, kind", [("run.lock", "file"), ("results.jsonl", "file"), ("run.json", "file"),
                                        ("traces", "folder"), ("traces/.images", "folder")])
def test_a_run_refuses_a_link_in_its_folder_and_writes_nothing_through_it(probe_dir, tmp_path, scripted_on_path,
                                                                           name, kind):
    out, target = planted(tmp_path, name, kind)
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--dataset", str(probe_dir), "--out", str(out), *SCRIPTED])
    assert refused(str(stopped.value), out / name), stopped.value
    assert untouched(target)


def test_the_report_refuses_a_link_for_its_folder(probe_dir, tmp_path, scripted_on_path):
    out = tmp_path / "run"
    assert main(["run", "--dataset", str(probe_dir), "--out", str(out), *SCRIPTED]) == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "report").symlink_to(elsewhere)
    with pytest.raises(SystemExit) as stopped:
        main(["report", str(out)])
    assert refused(str(stopped.value), out / "report") and list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("lock", ["other content", "hard link"])
def test_the_lock_never_writes_into_a_file_that_is_not_a_lock(probe_dir, tmp_path, scripted_on_path, lock):
    """A `run.lock` that holds something else, or is another file's second name, is left as it is."""
    out = tmp_path / "run"
    out.mkdir()
    target = tmp_path / "important.conf"
    target.write_text(CONTENT)
    if lock == "hard link":
        os.link(target, out / "run.lock")
    else:
        (out / "run.lock").write_text(CONTENT)
    with pytest.raises(SystemExit, match=rf"{out / 'run.lock'}: not a run's lock file .* it is left as it is"):
        main(["run", "--dataset", str(probe_dir), "--out", str(out), *SCRIPTED])
    assert (out / "run.lock").read_text() == CONTENT and target.read_text() == CONTENT


def test_a_lock_a_killed_run_left_is_taken_over(probe_dir, tmp_path, scripted_on_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.lock").write_text("4242\n")
    assert main(["run", "--dataset", str(probe_dir), "--out", str(out), *SCRIPTED]) == 0


@pytest.mark.parametrize("name", ["nodes", "nodes/3", "best"])
def test_sevex_files_are_not_written_through_a_link(tmp_path, name):
    out, target = planted(tmp_path, name, "folder")
    with pytest.raises(LinkRefused, match=f"{out / name}: a symbolic link"):
        if name == "best":
            PromptDir(None, {"task": "probes"}).save(RunFolder(out) / "best")
        else:
            write_results(RunFolder(out) / "nodes" / "3", "results.jsonl", [])
    assert untouched(target)


WAYS_IN = {"open": lambda folder, name: folder.open(name, os.O_RDWR),
           "log": lambda folder, name: folder.log(name),
           "write_atomic": lambda folder, name: folder.write_atomic(name, "{}"),
           "cut_torn_tail": lambda folder, name: folder.cut_torn_tail(name),
           "read_json": lambda folder, name: folder.read_json(name)}


@pytest.mark.parametrize("how", sorted(WAYS_IN))
def test_every_way_into_a_run_file_refuses_a_link_at_any_depth(tmp_path, how):
    target = tmp_path / "important"
    target.write_text(CONTENT)
    folder = RunFolder(tmp_path / "run")
    for name in ("a.json", "deep/er/a.json"):
        (folder.path / name).parent.mkdir(parents=True, exist_ok=True)
        (folder.path / name).symlink_to(target)
        with pytest.raises(LinkRefused, match=f"{folder.path / name}: a symbolic link"):
            WAYS_IN[how](folder, name)
        assert (folder.path / name).is_symlink()  # left as it is
    assert target.read_text() == CONTENT


def test_a_fifo_in_place_of_a_run_file_is_refused_without_waiting(tmp_path):
    folder = RunFolder(tmp_path)
    os.mkfifo(tmp_path / "results.jsonl")
    with pytest.raises(LinkRefused, match="results.jsonl: a symbolic link or not a file"):
        folder.read_bytes("results.jsonl")


def test_names_that_leave_the_run_folder_are_refused(tmp_path):
    for name in ("../x", "/etc/passwd", "a/../../x"):
        with pytest.raises(ValueError, match="not a name inside the run folder"):
            RunFolder(tmp_path).open(name, os.O_RDONLY)


@pytest.mark.slow
def test_as_nobody_too():
    """Run as root, this file's cases again under pytest as user `nobody`, in a folder of its own."""
    prelude = site_prelude()
    tree = [str(PROJECT / d) for d in ("servers", "plugins", "agents", "prompts", "tests", "tests/illusion")]
    code = prelude + f"sys.path[:0] = {tree!r}\nimport pytest\nsys.exit(pytest.main(sys.argv[1:]))"
    done = run_as_nobody(["-c", code, "-q", "-n", "0", "-p", "no:cacheprovider", "-p", "no:randomly",
                          "-k", "not as_nobody_too", str(Path(__file__).relative_to(PROJECT))],
                         timeout=280, cwd=str(PROJECT))
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-2000:]
    assert sys.executable  # the suite's own interpreter ran the cases above as root
