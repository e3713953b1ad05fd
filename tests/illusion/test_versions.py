"""One version, from the installed package's metadata, wherever a run or a client can read it: `--version` on the
four commands, `__version__`, the MCP server's serverInfo, run.json, every trace's start event, the report."""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest

import trompe_agents
import trompe_server
from trompe_agents.cli import main as trompe_main
from trompe_agents.illusion.cli import main as illusion_main
from trompe_agents.sevex.cli import main as sevex_main
from trompe_agents.toolclient import ToolClient
from trompe_agents.trace import read_events
from trompe_server.cli import main as server_main

INSTALLED = version("trompe")


@pytest.mark.parametrize("prog, main", [("trompe-server", server_main), ("trompe", trompe_main),
                                        ("illusion-agent", illusion_main), ("sevex", sevex_main)])
def test_every_command_prints_its_version(prog, main, capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"{prog} {INSTALLED}\n"


def test_packages_and_the_mcp_server_report_the_installed_version():
    assert trompe_agents.__version__ == trompe_server.__version__ == INSTALLED


async def test_an_mcp_client_reads_the_version_in_server_info():
    async with ToolClient.in_process(mcp=True) as tools:
        info = tools.client.server_info
    assert (info.name, info.version) == ("trompe", INSTALLED)


@pytest.mark.usefixtures("scripted_on_path")
def test_run_json_traces_and_report_carry_the_version(probe_dir, tmp_path, capsys):
    out = tmp_path / "run"
    assert illusion_main(["run", "--dataset", str(probe_dir), "--out", str(out), "--limit", "2", "--backend",
                          "function", "--model", "scripted:line_then_yes", "--no-progress"]) == 0
    meta = json.loads((out / "run.json").read_text())
    assert meta["trompe"] == meta["fingerprint"]["trompe"] == meta["invocations"][0]["trompe"] == INSTALLED
    for line in (out / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        assert record["trompe"] == INSTALLED
        starts = [e for e in read_events(out / record["trace"]) if e["event"] == "start"]
        assert starts and all(e["trompe"] == INSTALLED for e in starts)
    capsys.readouterr()
    assert illusion_main(["report", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["harness"]["version"] == INSTALLED
    assert f"<tr><th>trompe version</th><td>{INSTALLED}</td></tr>" in (out / "report" / "index.html").read_text()
