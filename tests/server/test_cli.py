"""`trompe-server` flags a user can get wrong: each is refused at start-up with the flag and what it accepts."""

from __future__ import annotations

import gc
import signal
import subprocess
import tempfile

import pytest
from trompe_server.cli import main

from serverkit import SERVER, SPILL_BUDGET, env_with, spill_over_stdio
from signalkit import AS_A_TERMINAL


@pytest.mark.parametrize("port", ["70000", "65536", "-1", "http"])
def test_port_out_of_range_is_named_before_binding(port, capsys):
    with pytest.raises(SystemExit):
        main(["--http", "--port", port])
    assert f"argument --port: '{port}' is not a TCP port; accepted: 1 to 65535" in capsys.readouterr().err


def test_root_that_is_not_a_folder_is_refused(tmp_path):
    afile = tmp_path / "photo.png"
    afile.write_bytes(b"")
    with pytest.raises(SystemExit, match=f"--root: not a folder: {tmp_path / 'missing'}, {afile}$"):
        main(["--root", str(tmp_path), "--root", str(tmp_path / "missing"), "--root", str(afile), "--list-tools"])


def test_root_with_a_tilde_is_the_home_folder(tmp_path, monkeypatch, capsys):
    """Desktop clients pass args without a shell, so `~/Pictures` arrives unexpanded."""
    monkeypatch.setenv("HOME", str(tmp_path))
    main(["--root", "~", "--list-tools"])
    assert "crop" in capsys.readouterr().out


@pytest.mark.parametrize("flag", ["--list-tools", "--list-plugins"])
def test_a_listing_removes_its_spill_folder_before_returning(flag, tmp_path, monkeypatch, capsys):
    """Called in-process (a launcher, a test), the listing must not leave a folder for garbage collection."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gc.disable()  # the app holds reference cycles: only an explicit close removes the folder in time
    try:
        main([flag])
        left = list(tmp_path.glob("trompe-spill-*"))
    finally:
        gc.enable()
    assert capsys.readouterr().out and not left


def test_ctrl_c_stops_the_stdio_server_and_removes_its_spill_folder(tmp_path):
    """The start-up line says "Ctrl-C to stop"; a thread blocked reading stdin must not keep it alive. A budget
    of one and a half images makes a crop spill the original, so the folder exists until the signal. Started as
    from a terminal: a suite run as a script's background job has SIGINT ignored, which the server keeps."""
    proc = subprocess.Popen([SERVER, "--memory-budget", SPILL_BUDGET], env=env_with(TMPDIR=str(tmp_path)),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **AS_A_TERMINAL)
    try:
        assert "Ctrl-C to stop" in proc.stderr.readline()
        spill_over_stdio(proc)
        assert [list(folder.iterdir()) != [] for folder in tmp_path.glob("trompe-spill-*")] == [True]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0  # a bound for a server that ignores the signal, not a timing check
        assert not list(tmp_path.glob("trompe-spill-*"))
    finally:
        proc.kill()
        proc.communicate()


def test_listing_into_a_closed_pipe_is_quiet():
    """`trompe-server --list-tools | head -1`: the reader leaves early, which is no reason for a traceback."""
    proc = subprocess.Popen([SERVER, "--list-tools"], env=env_with(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    proc.stdout.close()  # before the server has loaded its plugins, so its first write meets a closed pipe
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in proc.stderr.read()
