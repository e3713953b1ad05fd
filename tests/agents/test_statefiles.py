"""State files survive kills: whole-file replacement for run.json/state, truncation for a torn log tail."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
import textwrap
import time

import pytest

from trompe_agents.illusion.runmeta import read_meta
from trompe_agents.runfolder import RunFolder
from trompe_agents.statefiles import STALE_TEMP_S, cut_torn_tail, read_json, write_json_atomic

WRITER = textwrap.dedent("""
    import sys
    from trompe_agents.statefiles import write_json_atomic
    path, n = sys.argv[1], 0
    while True:
        write_json_atomic(path, {"n": n, "padding": "x" * 200_000})
        if n == 0:
            print("started", flush=True)
        n += 1
""")


def test_a_kill_during_a_rewrite_leaves_the_old_or_the_new_file(tmp_path):
    """run.json was rewritten in place: a kill left it empty and resume failed with 'Expecting value'."""
    path = tmp_path / "run.json"
    for _ in range(5):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
        assert writer.stdout.readline() == "started\n"
        writer.kill()
        writer.communicate()
        assert read_json(path)["padding"] == "x" * 200_000
    assert all(p.name == "run.json" or p.name.startswith(".run.json.") for p in tmp_path.iterdir())


def test_the_next_write_removes_temp_files_a_killed_writer_left(tmp_path):
    path = tmp_path / "run.json"
    stale, fresh = tmp_path / ".run.json.abc123.tmp", tmp_path / ".run.json.def456.tmp"
    for leftover in (stale, fresh):
        leftover.write_text("{")
    old = time.time() - STALE_TEMP_S - 5
    os.utime(stale, (old, old))
    write_json_atomic(path, {"n": 1})
    assert not stale.exists(), "a temp file of a killed writer stays in the run folder"
    assert fresh.exists(), "a temp file that may belong to a writer still running must stay"
    assert read_json(path) == {"n": 1}


def test_a_broken_state_file_is_named(tmp_path):
    (tmp_path / "run.json").write_text("")
    with pytest.raises(ValueError, match=f"{tmp_path / 'run.json'}: not valid JSON"):
        read_meta(tmp_path)


def test_torn_tail_is_cut_in_place_without_reading_the_whole_log(tmp_path):
    """A 118 MiB results.jsonl was rewritten whole to drop its torn line; a kill then left 0 bytes.

    Here the log is a sparse 2 GiB file and the repair runs with 1 GiB of address space: reading it whole,
    as the old repair did, cannot even start.
    """
    path = tmp_path / "results.jsonl"
    good = json.dumps({"id": "last"}) + "\n"
    with path.open("wb") as log:
        log.truncate(2 << 30)
        log.seek(0, 2)
        log.write(b"\n" + good.encode() + b'{"id": "torn", "ans')
    size = path.stat().st_size
    repair = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from trompe_agents.illusion.results import repair_tail
        from pathlib import Path
        repair_tail(Path({str(path)!r}))
    """)
    done = subprocess.run([sys.executable, "-c", repair], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert path.stat().st_size == size - len('{"id": "torn", "ans')
    with path.open("rb") as log:
        log.seek(-len(good), 2)
        assert log.read() == good.encode()


@pytest.mark.parametrize("content, kept", [(b"", b""), (b"a\nb\n", b"a\nb\n"), (b"a\nb", b"a\n"), (b"torn", b"")])
def test_cut_torn_tail_keeps_every_whole_line(tmp_path, content, kept):
    path = tmp_path / "log.jsonl"
    path.write_bytes(content)
    cut_torn_tail(path)
    assert path.read_bytes() == kept


def test_a_line_the_disk_takes_only_part_of_is_cut_back_whole(tmp_path):
    """The kernel writes up to the file-size limit, then refuses (a full disk takes part of a write alike): the
    log is left as it was before the line, never with its first bytes."""
    path = tmp_path / "log.jsonl"
    with RunFolder(tmp_path).log(path.name) as log:
        log.append('{"id": "a"}\n')
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 10, hard))
        try:
            with pytest.raises(OSError) as refused:
                log.append('{"id": "b", "padding": "' + "x" * 100 + '"}\n')
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        assert refused.value.errno in (errno.ENOSPC, errno.EFBIG) and refused.value.filename == str(path)
        log.append('{"id": "c"}\n')
    assert path.read_text() == '{"id": "a"}\n{"id": "c"}\n'
