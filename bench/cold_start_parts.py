"""Benchmark: where trompe-server's cold start goes beyond the SDK floor's, part by part, by CPU.

Each part is a fresh interpreter running one snippet, CPU (user + system) of that process from wait4, runs
alternating so load hits each alike; a part's cost is its median less the median of the part it builds on.
The tool schemas are timed inside the app build (the SDK's `Tool.from_function`, which builds each tool's
argument model and JSON schema), and the floor's one tool the same way.

    python bench/cold_start_parts.py --repeat 11
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

# The SDK's Tool.from_function, wrapped to sum its own CPU: what building the tools' schemas costs.
TIMED_SCHEMAS = """
import time
from mcp.server.mcpserver.tools import base
made = base.Tool.from_function.__func__
spent = [0.0]
def timed(cls, *args, **kwargs):
    start = time.process_time()
    try:
        return made(cls, *args, **kwargs)
    finally:
        spent[0] += time.process_time() - start
base.Tool.from_function = classmethod(timed)
"""
PARTS = {
    "bare interpreter": "pass",
    "floor's imports (SDK server, Pillow)": "from mcp.server.mcpserver import Image, MCPServer; from PIL import Image",
    "floor's server and one tool": TIMED_SCHEMAS + (
        "from mcp.server.mcpserver import MCPServer\nserver = MCPServer('floor')\n"
        "@server.tool()\ndef ping() -> str:\n    return 'pong'\nprint(spent[0])"),
    "trompe's imports": "import trompe_server.cli",
    "trompe's app (plugins, 23 tools)": TIMED_SCHEMAS + (
        "import trompe_server.cli\nfrom trompe_server.app import create_app\ncreate_app()\nprint(spent[0])"),
    "numpy's import (one OpenBLAS thread)": "import numpy",
}


def cpu_of(code: str) -> tuple[float, float | None]:
    """CPU seconds of a fresh interpreter running `code`, and the schema seconds it printed, if any."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}  # as a serving trompe-server sets it
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, text=True)
    out = child.stdout.read().strip()
    _, status, usage = os.wait4(child.pid, 0)
    child.stdout.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"part failed: {code!r}")
    return usage.ru_utime + usage.ru_stime, float(out) if out else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="runs of each part (default 11)")
    args = parser.parse_args()
    cpu: dict[str, list[float]] = {name: [] for name in PARTS}
    schemas: dict[str, list[float]] = {name: [] for name in PARTS}
    for _ in range(args.repeat):
        for name, code in PARTS.items():
            seconds, inner = cpu_of(code)
            cpu[name].append(seconds)
            if inner is not None:
                schemas[name].append(inner)
    med = {name: statistics.median(values) for name, values in cpu.items()}
    bare, floor_imports, trompe_imports = (med["bare interpreter"], med["floor's imports (SDK server, Pillow)"],
                                           med["trompe's imports"])
    rows = [
        ("numpy's import (one OpenBLAS thread)", med["numpy's import (one OpenBLAS thread)"] - bare),
        ("trompe's imports beyond the floor's", trompe_imports - floor_imports),
        ("trompe's app build (plugins, 23 tools)", med["trompe's app (plugins, 23 tools)"] - trompe_imports),
        ("  of which the SDK's Tool.from_function, 23 tools",
         statistics.median(schemas["trompe's app (plugins, 23 tools)"])),
        ("  the floor's one tool, the same way", statistics.median(schemas["floor's server and one tool"])),
        ("the floor's server and tool", med["floor's server and one tool"] - floor_imports),
    ]
    print(f"CPU ms, medians of {args.repeat}, alternating; load average at the end "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}\n")
    print("| part | CPU ms |\n|---|---:|")
    for label, seconds in rows:
        print(f"| {label} | {1000 * seconds:.1f} |")


if __name__ == "__main__":
    main()
