"""Benchmark: peak RSS of a real `trompe-server` (--memory-budget 256MiB) on small files that decode to 49 MP.

One fresh stdio server per row opens one input (a 16-bit grey PNG, 32-bit float and integer TIFFs, an RGB PNG)
and, where the row names one, runs a tool on it; the row is the server's VmHWM. Goal: budget + 300 MiB.
`--baseline REF` adds the same rows for the server as of a git ref, side by side (as memory_admission.py).

    python bench/memory_formats.py                      # this checkout, a few minutes on 2 loaded cores
    python bench/memory_formats.py --baseline HEAD      # and the last commit's server
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from memory_admission import MB, extract, server_pid, vm_hwm
from PIL import Image

SIDE = 7000  # 49 MP, under max_pixels' default
MiB = 1 << 20
BUDGET = 256 * MiB


def write_inputs(folder: Path) -> dict[str, int]:
    """The four inputs, flat (so they compress about 1000:1); returns their sizes on disk."""
    inputs = {"grey16.png": (Image.new("I;16", (SIDE, SIDE), 30000), "PNG", {"compress_level": 9}),
              "float32.tif": (Image.new("F", (SIDE, SIDE), 100.0), "TIFF", {"compression": "tiff_adobe_deflate"}),
              "int32.tif": (Image.new("I", (SIDE, SIDE), 30000), "TIFF", {"compression": "tiff_adobe_deflate"}),
              "rgb.png": (Image.new("RGB", (SIDE, SIDE), (90, 140, 200)), "PNG", {"compress_level": 9})}
    sizes = {}
    for name, (im, fmt, options) in inputs.items():
        buf = io.BytesIO()
        im.save(buf, format=fmt, **options)
        (folder / name).write_bytes(buf.getvalue())
        sizes[name] = len(buf.getvalue())
    return sizes


ROWS = [("grey16.png", None, {}), ("float32.tif", None, {}), ("int32.tif", None, {}), ("rgb.png", None, {}),
        ("rgb.png", "extract_channel", {"channel": "H"}), ("rgb.png", "isolate_color", {"color": "#5a8cc8"}),
        ("rgb.png", "overlay_grid", {}), ("rgb.png", "sample_color", {"points": [[10, 10]]}),
        ("rgb.png", "blur", {"radius": 8})]


async def peak(folder: Path, source: str, tool: str | None, arguments: dict, pythonpath: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TROMPE_")}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    params = StdioServerParameters(command=sys.executable, env=env, args=[
        "-c", "from trompe_server.cli import main; main()", "--root", str(folder), "--memory-budget", "256MiB"])
    async with Client(params) as client:
        pid = server_pid(os.getpid())
        result = await client.call_tool("open_session", {"source": source})
        if tool is not None and not result.is_error:
            session = result.structured_content["session"]
            result = await client.call_tool(tool, {"session": session, "image": "original", **arguments})
        if result.is_error:
            return "error: " + result.content[0].text[:80]
        return f"{vm_hwm(pid) / MB:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REF", help="also measure the server as of this git ref")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trompe-bench-") as tmp:
        folder = Path(tmp)
        sizes = write_inputs(folder)
        variants = [("this checkout", None)]
        if args.baseline:
            (folder / "baseline").mkdir()
            variants.insert(0, (f"baseline {args.baseline}", extract(args.baseline, folder / "baseline")))
        goal = (BUDGET + 300 * MiB) / MB
        print(f"{SIDE}x{SIDE} inputs, --memory-budget 256MiB; goal: peak RSS under {goal:.0f} MB")
        print("| input | KB | tool | " + " | ".join(f"{label} peak MB" for label, _ in variants) + " |")
        print("|---|---:|---|" + "---:|" * len(variants))
        for source, tool, arguments in ROWS:
            peaks = [anyio.run(peak, folder, source, tool, arguments, path) for _, path in variants]
            print(f"| {source} | {sizes[source] // 1000} | {tool or 'open_session'} | " + " | ".join(peaks) + " |",
                  flush=True)


if __name__ == "__main__":
    main()
