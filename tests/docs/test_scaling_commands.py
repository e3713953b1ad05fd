"""docs/scaling.md as an operator copies it: every trompe and Ray command on the page parses, sized as it says.

The commands need a cluster to run, so they are parsed, not run: each `trompe-server` and `illusion-agent` line
by the program's own argparse parser, each `ray` line by Ray's click command (without invoking it). Its limits
table must name every server limit with the scope the code gives it (trompe_server.limits.SCOPE).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from trompe_agents.illusion.cli import build_parser as illusion_agent_parser
from trompe_server.cli import build_parser as server_parser
from trompe_server.limits import SCOPE

PAGE = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"
OTHERS = {"export", "pip", "python", "redis-server", "vllm"}  # other programs: documented by their own projects


def commands() -> list[list[str]]:
    """Every command line of the page's bash blocks: continuations joined, comments dropped."""
    blocks = re.findall(r"```bash\n(.*?)\n```", PAGE.read_text(encoding="utf-8"), re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    return [words for line in lines if (words := shlex.split(line, comments=True))]


def parse(words: list[str]):
    """The command's options as its program reads them; a parse error fails the test with the line."""
    program, args = words[0], words[1:]
    try:
        if program == "trompe-server":
            return server_parser().parse_args(args)
        if program == "illusion-agent":
            return illusion_agent_parser().parse_args(args)
    except SystemExit:
        pytest.fail(f"docs/scaling.md: {shlex.join(words)} does not parse")
    if program == "ray":
        ray_cli = pytest.importorskip("ray.scripts.scripts", reason="the [ray] extra is not installed").cli
        context = ray_cli.make_context("ray", [args[0]])
        return ray_cli.get_command(context, args[0]).make_context(args[0], args[1:], parent=context).params
    assert program in OTHERS, f"docs/scaling.md: {program!r} is neither a trompe nor a known other command"
    return None


def test_every_command_on_the_page_parses():
    programs = [words[0] for words in commands() if parse(words) is not None]
    assert {"trompe-server", "illusion-agent", "ray"} <= set(programs)


def test_the_replicas_quotas_cover_every_run_on_the_page():
    parsed = [(words[0], parse(words)) for words in commands() if words[0] in ("trompe-server", "illusion-agent")]
    replicas = [args for program, args in parsed  # the service's replicas: a shared registry, serving other hosts
                if program == "trompe-server" and args.registry != "memory" and args.host != "127.0.0.1"]
    runs = [args.concurrency for program, args in parsed if program == "illusion-agent" and args.command == "run"]
    assert replicas and runs
    for args in replicas:  # one shared token: all runs are one client, each sample in flight one session
        assert args.max_sessions_per_client >= sum(runs), (args.max_sessions_per_client, runs)
        assert args.max_sessions >= args.max_sessions_per_client
    assert f"{' + '.join(map(str, runs))} = {sum(runs)}" in PAGE.read_text(encoding="utf-8")


def test_the_limits_table_gives_every_server_limit_its_scope():
    rows = re.findall(r"^\| `--([a-z-]+)` \| (shared|replica|request) \|", PAGE.read_text(encoding="utf-8"), re.M)
    assert {name.replace("-", "_"): scope for name, scope in rows} == SCOPE
