"""Bad command lines get one line naming the argument, never a traceback."""

from __future__ import annotations

import pytest

from trompe_agents.illusion.cli import main as illusion_main
from trompe_agents.sevex.cli import main as sevex_main
from trompe_server.cli import build_parser


@pytest.mark.parametrize("out", ["afile", "afile/run"])
def test_out_pointing_at_a_file_is_named(tmp_path, capsys, out):
    (tmp_path / "afile").write_text("")
    target = str(tmp_path / out)
    with pytest.raises(SystemExit):
        illusion_main(["--backend", "function", "--model", "json:dumps", "run", "--dataset", str(tmp_path),
                       "--out", target])
    assert f"argument --out: {target!r}: {tmp_path / 'afile'} is a file; accepted: a folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sevex_main(["explore", "--task", "probes", "--dev", str(tmp_path), "--out", target])
    assert "is a file; accepted: a folder (created if missing)" in capsys.readouterr().err


@pytest.mark.parametrize("raw", ["1e400GiB", "inf", "1e309"])
def test_a_limit_too_large_to_hold_is_named(capsys, raw):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--memory-budget", raw])
    assert f"memory_budget: {raw!r} is too large; accepted: a positive number up to 1e+15" in capsys.readouterr().err
