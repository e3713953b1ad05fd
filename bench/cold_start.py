"""Benchmark: server cold start, from spawning `trompe-server` (stdio) to the answer of its first tools/list.

The client side is plain JSON-RPC lines written to the child's stdin, so only the server's start is timed:
interpreter, imports, plugin discovery, tool schemas, the initialize handshake and the listing itself.
Runs alternate between the commands given, so machine load hits each alike.

    python bench/cold_start.py --repeat 7
    python bench/cold_start.py --repeat 7 --also "/work/bench-venv/bin/imagesorcery-mcp"

The last row is a one-tool server on the same MCP SDK: the floor no server built on the SDK can go below.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVER = str(Path(sys.executable).with_name("trompe-server"))
HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "cold-start-bench", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


# The smallest stdio server the same SDK makes: what any server built on it pays before its own code runs.
SDK_FLOOR = """from mcp.server.mcpserver import MCPServer

server = MCPServer("floor")


@server.tool()
def ping() -> str:
    return "pong"


server.run()
"""


def first_listing(argv: list[str], cwd: str) -> tuple[float, int]:
    """Seconds from spawn to the tools/list reply, and how many tools it listed."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             cwd=cwd, env=os.environ | {"FASTMCP_LOG_LEVEL": "WARNING"})
    try:
        child.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE).encode())
        child.stdin.flush()
        for line in child.stdout:
            if not line.startswith(b"{"):  # ImageSorcery prints its version on stdout before serving
                continue
            reply = json.loads(line)
            if reply.get("id") == 2:
                if "error" in reply:
                    raise RuntimeError(f"{argv[0]}: tools/list failed: {reply['error']}")
                return time.perf_counter() - start, len(reply["result"]["tools"])
        raise RuntimeError(f"{argv[0]} exited before answering tools/list")
    finally:
        child.kill()
        child.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="cold starts per command (default 7)")
    parser.add_argument("--also", action="append", default=[], metavar="COMMAND",
                        help="another stdio MCP server command to time alongside (repeatable)")
    args = parser.parse_args()
    commands = {"trompe-server": [SERVER], "trompe-server --tools core": [SERVER, "--tools", "core"]}
    commands |= {c: shlex.split(c) for c in args.also}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    tools: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as cwd:  # a peer may write config files into its working directory
        floor = Path(cwd) / "sdk_floor.py"
        floor.write_text(SDK_FLOOR, encoding="utf-8")
        commands["SDK floor: one-tool MCPServer"] = [sys.executable, str(floor)]
        samples["SDK floor: one-tool MCPServer"] = []
        for argv in commands.values():
            first_listing(argv, cwd)  # warm the page cache: every row then starts from the same state
        for _ in range(args.repeat):
            for name, argv in commands.items():
                seconds, tools[name] = first_listing(argv, cwd)
                samples[name].append(seconds)
    base = statistics.median(samples["trompe-server"])
    print(f"\nSpawn to first tools/list reply over stdio, median of {args.repeat} (alternating)\n")
    print("| server | tools | median s | min s | max s | × trompe-server |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"| {name} | {tools[name]} | {median:.3f} | {min(values):.3f} | {max(values):.3f} | "
              f"{median / base:.2f}× |")


if __name__ == "__main__":
    main()
