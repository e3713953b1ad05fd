"""Benchmark: peak RSS of a real `trompe-server` while 3 clients convert a 50-megapixel PNG at the same time.

The PNG is small on disk (~150 KB, one flat colour) but decodes to 7072x7072 RGB = 150 MB of pixels: the
memory budget must cover that work in flight, not only the images kept. Goal: peak RSS <= budget + 300 MB.
Each row starts a fresh server over stdio and reads its VmHWM; `--baseline REF` adds the same rows for the
server as of a git ref (extracted with `git archive`), side by side.

    python bench/memory_admission.py                       # this checkout, budget 256MiB
    python bench/memory_admission.py --baseline dcf3aca    # and the server before admission control
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
SIDE = 7072  # 7072^2 = 50.0 MP, just over max_pixels' default of 50,000,000: the flag below raises it
MB = 1_000_000


def small_big_png(folder: Path) -> Path:
    """A ~150 KB PNG that decodes to 50 MP (zlib compresses a flat image about 1000:1)."""
    path = folder / "flat.png"
    buf = io.BytesIO()
    Image.new("RGB", (SIDE, SIDE), (90, 140, 200)).save(buf, format="PNG", compress_level=9)
    path.write_bytes(buf.getvalue())
    return path


def vm_hwm(pid: int) -> int:
    """Peak resident set size of a live process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def server_pid(parent: int) -> int:
    """The trompe-server child of this process started last (the stdio client does not expose it)."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return int(children[-1])


async def run_calls(folder: Path, budget: str, calls: int, pythonpath: str | None) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TROMPE_")}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    params = StdioServerParameters(
        command=sys.executable, env=env,
        args=["-c", "from trompe_server.cli import main; main()", "--root", str(folder), "--memory-budget", budget,
              "--max-pixels", "60000000", "--max-session-bytes", "8GiB"])
    errors: list[str] = []
    async with Client(params) as client:
        pid = server_pid(os.getpid())
        start = vm_hwm(pid)

        async def one() -> None:
            opened = await client.call_tool("open_session", {"source": "flat.png"})
            if opened.is_error:
                errors.append(opened.content[0].text)
                return
            session = opened.structured_content["session"]
            grey = await client.call_tool("convert_grayscale", {"session": session, "image": "original"})
            if grey.is_error:
                errors.append(grey.content[0].text)

        began = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(calls):
                group.start_soon(one)
        seconds = time.perf_counter() - began
        peak = vm_hwm(pid)
    return {"start": start / MB, "peak": peak / MB, "seconds": seconds, "errors": len(errors),
            "first_error": errors[0] if errors else ""}


def extract(ref: str, into: Path, parts: tuple[str, ...] = ("servers", "plugins")) -> str:
    """The packages under `parts` (the server and plugins unless told) as of `ref`, for PYTHONPATH."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, *parts], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return os.pathsep.join(str(into / part) for part in parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="256MiB", help="--memory-budget of the server (default 256MiB)")
    parser.add_argument("--baseline", metavar="REF", help="also measure the server as of this git ref")
    args = parser.parse_args()
    budget_mb = int(args.budget.removesuffix("MiB")) * 1024 * 1024 / MB
    with tempfile.TemporaryDirectory(prefix="trompe-bench-") as tmp:
        folder = Path(tmp)
        print(f"input: {small_big_png(folder).stat().st_size // 1000} KB PNG, {SIDE}x{SIDE} = "
              f"{SIDE * SIDE / 1e6:.0f} MP RGB; budget {args.budget} = {budget_mb:.0f} MB, "
              f"goal peak <= {budget_mb + 300:.0f} MB", flush=True)
        variants = [("this checkout", None)]
        if args.baseline:
            (folder / "baseline").mkdir()
            variants.insert(0, (f"baseline {args.baseline}", extract(args.baseline, folder / "baseline")))
        print("| server | calls | idle RSS MB | peak RSS MB | peak / goal | seconds | errors |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, path in variants:
            for calls in (1, 3):
                row = anyio.run(run_calls, folder, args.budget, calls, path)
                print(f"| {label} | {calls} | {row['start']:.0f} | {row['peak']:.0f} | "
                      f"{row['peak'] / (budget_mb + 300):.2f}x | {row['seconds']:.1f} | {row['errors']} |", flush=True)
                if row["first_error"]:
                    print(f"  first error: {row['first_error'][:200]}")


if __name__ == "__main__":
    main()
