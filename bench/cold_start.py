"""Benchmark: server cold start, from spawning `trompe-server` (stdio) to the answer of its first tools/list.

The client side is plain JSON-RPC lines written to the child's stdin, so only the server's start is timed:
interpreter, imports, plugin discovery, tool schemas, the initialize handshake and the listing itself.
Runs alternate between the commands given, so machine load hits each alike; the figure to trust on a shared
box is each server's own CPU time, beside the wall time a user waits.

    python bench/cold_start.py --repeat 7
    python bench/cold_start.py --repeat 7 --also "/work/bench-venv/bin/imagesorcery-mcp"
    python bench/cold_start.py --repeat 7 --first-image    # to the first image a tool call returns

With --first-image the clock runs on to the reply carrying the first image of a 1024x1024 photo: for trompe,
open_session then view_image; for the SDK floor, one tool that reads the file with Pillow and returns it as PNG
(the SDK's Image helper). Every `--also` command is taken to be a trompe server.

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


FLOOR = "SDK floor: one-tool MCPServer"
# The smallest stdio server the same SDK makes: what any server built on it pays before its own code runs.
SDK_FLOOR = """from mcp.server.mcpserver import MCPServer

server = MCPServer("floor")


@server.tool()
def ping() -> str:
    return "pong"


server.run()
"""
# The floor to the first image: the same server plus the least any image tool does, Pillow in and PNG out.
SDK_IMAGE_FLOOR = """import io
from mcp.server.mcpserver import Image, MCPServer
from PIL import Image as PILImage

server = MCPServer("floor")


@server.tool()
def show(path: str) -> Image:
    buffer = io.BytesIO()
    PILImage.open(path).save(buffer, "PNG", compress_level=1)  # as server_tools.py's raw floor
    return Image(data=buffer.getvalue(), format="png")


server.run()
"""


def first_listing(argv: list[str], cwd: str, image: str | None = None) -> tuple[float, float, int]:
    """Wall seconds from spawn to the tools/list reply, the server's CPU seconds, and how many tools it listed.

    The CPU time (user + system, from wait4) counts only the server process, so it holds on a loaded box where
    wall time also measures the other jobs; the server is killed as soon as it has answered."""
    start = time.perf_counter()
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          cwd=cwd, env=os.environ | {"FASTMCP_LOG_LEVEL": "WARNING"}) as child:
        try:
            seconds, tools = _listing(child, argv[0], start)
            if image is not None:
                seconds = _first_image(child, argv[0], start, image, floor=argv[-1].endswith(FLOOR_FILE))
        finally:
            child.kill()
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_utime + usage.ru_stime, tools


def _listing(child: subprocess.Popen, name: str, start: float) -> tuple[float, int]:
    child.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE).encode())
    child.stdin.flush()
    for line in child.stdout:
        if not line.startswith(b"{"):  # ImageSorcery prints its version on stdout before serving
            continue
        reply = json.loads(line)
        if reply.get("id") == 2:
            if "error" in reply:
                raise RuntimeError(f"{name}: tools/list failed: {reply['error']}")
            return time.perf_counter() - start, len(reply["result"]["tools"])
    raise RuntimeError(f"{name} exited before answering tools/list")


def _reply(child: subprocess.Popen, request: dict) -> dict:
    child.stdin.write((json.dumps({"jsonrpc": "2.0", **request}) + "\n").encode())
    child.stdin.flush()
    for line in child.stdout:
        if line.startswith(b"{") and (reply := json.loads(line)).get("id") == request["id"]:
            return reply
    raise RuntimeError("the server exited before answering")


def _first_image(child: subprocess.Popen, name: str, start: float, image: str, floor: bool) -> float:
    """Seconds from spawn to the reply holding the first image (the listing has been answered)."""
    if floor:
        calls = [("show", {"path": image})]
    else:
        opened = _reply(child, {"id": 3, "method": "tools/call",
                                "params": {"name": "open_session", "arguments": {"source": image}}})
        calls = [("view_image", {"session": opened["result"]["structuredContent"]["session"], "image": "original"})]
    for name_, arguments in calls:
        reply = _reply(child, {"id": 4, "method": "tools/call", "params": {"name": name_, "arguments": arguments}})
        if "error" in reply or not any(c["type"] == "image" for c in reply["result"]["content"]):
            raise RuntimeError(f"{name}: no image in {str(reply)[:300]}")
    return time.perf_counter() - start


FLOOR_FILE = "sdk_floor.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="cold starts per command (default 7)")
    parser.add_argument("--also", action="append", default=[], metavar="COMMAND",
                        help="another stdio MCP server command to time alongside (repeatable)")
    parser.add_argument("--first-image", action="store_true",
                        help="time to the first image a tool returns (a 1024x1024 photo), not to tools/list")
    args = parser.parse_args()
    commands = {"trompe-server": [SERVER], "trompe-server --tools core": [SERVER, "--tools", "core"]}
    commands |= {c: shlex.split(c) for c in args.also}
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    tools: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as cwd:  # a peer may write config files into its working directory
        floor = Path(cwd) / FLOOR_FILE
        floor.write_text(SDK_IMAGE_FLOOR if args.first_image else SDK_FLOOR, encoding="utf-8")
        image = None
        if args.first_image:
            from PIL import Image
            from sample_images import photo

            image = str(Path(cwd) / "photo.png")
            Image.fromarray(photo(1024, 1024)).save(image, compress_level=1)
        commands[FLOOR] = [sys.executable, str(floor)]
        wall[FLOOR], cpu[FLOOR] = [], []
        for argv in commands.values():
            first_listing(argv, cwd, image)  # warm the page cache: every row then starts from the same state
        for _ in range(args.repeat):
            for name, argv in commands.items():
                seconds, cpu_seconds, tools[name] = first_listing(argv, cwd, image)
                wall[name].append(seconds)
                cpu[name].append(cpu_seconds)
    floor_cpu = statistics.median(cpu[FLOOR])
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    reply = "image a tool returned" if image else "tools/list reply"
    print(f"\nSpawn to the first {reply} over stdio, median of {args.repeat} (alternating); CPU = the "
          f"server process's user + system time; load average at the end {load}\n")
    print("| server | tools | median CPU s | CPU − SDK floor s | × floor CPU | median wall s | min wall s | "
          "max wall s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in commands:
        median = statistics.median(cpu[name])
        print(f"| {name} | {tools[name]} | {median:.3f} | {median - floor_cpu:+.3f} | {median / floor_cpu:.2f}× | "
              f"{statistics.median(wall[name]):.3f} | {min(wall[name]):.3f} | {max(wall[name]):.3f} |")


if __name__ == "__main__":
    main()
