"""Benchmark: a real `trompe-server`'s RSS idle, at its peak over one session of chained draws, and after
close_session, beside an earlier tree in the same run.

Each row is a fresh stdio server (`--memory-budget 256MiB`): RSS after its first tools/list (idle), the
session's peak (VmHWM) over `--versions` draw_line calls each on the previous result of a 1024x1024 photo,
and RSS once close_session has returned. Goal: back within 20 MiB of idle; peak <= budget + 100 MiB.

    python bench/session_rss.py --baseline /tmp/before      # a checkout (git archive HEAD | tar -x -C ...)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import anyio
from memory_admission import server_pid, vm_hwm
from mcp import Client, StdioServerParameters
from PIL import Image
from sample_images import photo

MiB = 1 << 20


def cpu_and_faults(pid: int) -> tuple[float, float, int]:
    """User and system CPU seconds of a live process so far, and its minor page faults."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick, int(fields[7])


def vm_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


async def one_session(folder: Path, pythonpath: str, versions: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TROMPE_")} | {"PYTHONPATH": pythonpath}
    params = StdioServerParameters(command=sys.executable, env=env, args=[
        "-c", "from trompe_server.cli import main; main()", "--root", str(folder), "--memory-budget", "256MiB"])
    async with Client(params) as client:
        pid = server_pid(os.getpid())
        await client.list_tools()
        idle = vm_rss(pid)
        opened = await client.call_tool("open_session", {"source": "photo.png"})
        session, image = opened.structured_content["session"], "original"
        user, system, faults = cpu_and_faults(pid)
        for i in range(versions):
            drawn = await client.call_tool("draw_line", {"session": session, "image": image,
                                                         "start": [i * 10 % 1024, 0], "end": [1023, 1023]})
            assert not drawn.is_error, drawn.content[0].text
            image = drawn.structured_content["image"]
        peak = vm_hwm(pid)
        user_after, system_after, faults_after = cpu_and_faults(pid)
        await client.call_tool("close_session", {"session": session})
        closed = vm_rss(pid)
    return {"idle": idle / MiB, "peak": peak / MiB, "closed": closed / MiB,
            "user": 1000 * (user_after - user) / versions, "system": 1000 * (system_after - system) / versions,
            "faults": (faults_after - faults) / versions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="folder with an earlier checkout, run alternately")
    parser.add_argument("--versions", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    trees = {"this checkout": here} | ({"before": args.baseline.resolve()} if args.baseline else {})
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="trompe-bench-") as tmp:
        Image.fromarray(photo(1024, 1024)).save(Path(tmp) / "photo.png", compress_level=1)
        for _ in range(args.repeat):
            for name, tree in trees.items():
                path = os.pathsep.join(str(tree / part) for part in ("servers", "plugins"))
                rows[name].append(anyio.run(one_session, Path(tmp), path, args.versions))
    print(f"\n{args.versions} x draw_line on 1024x1024, budget 256 MiB; medians of {args.repeat}; load "
          f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}\n")
    print("| server | idle RSS MiB | peak RSS MiB | after close_session MiB | after − idle MiB | server user ms "
          "per draw | system ms per draw | minor faults per draw |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, runs in rows.items():
        idle, peak, closed, user, system, faults = (statistics.median(r[k] for r in runs) for k in (
            "idle", "peak", "closed", "user", "system", "faults"))
        print(f"| {name} | {idle:.0f} | {peak:.0f} | {closed:.0f} | {closed - idle:+.0f} | {user:.1f} | "
              f"{system:.1f} | {faults:,.0f} |")


if __name__ == "__main__":
    main()
