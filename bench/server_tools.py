"""Benchmark: each core tool called directly (Pillow + PNG encode) vs through MCP in memory, stdio and HTTP.

Also the peak memory (RSS) of one session holding 200 derived versions of a 4000x3000 image, to show the
memory budget and spill to disk keep the server bounded.

    python bench/server_tools.py            # full run (a few minutes)
    python bench/server_tools.py --quick    # fewer repetitions, one memory budget
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import typing
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from mcp import Client, StdioServerParameters
from PIL import Image
from pydantic import TypeAdapter
from tqdm import tqdm

from trompe_server.app import ServerConfig, create_app
from trompe_server.imageio import encode_png, preview
from trompe_server.limits import GiB, MiB, Limits

SIZES = [(1024, 1024), (4000, 3000)]
SERVER = str(Path(sys.executable).with_name("trompe-server"))
LIMIT_FLAGS = ["--max-session-bytes", "64GiB", "--max-images", "5000"]


def tool_arguments(tool: str, w: int, h: int) -> dict[str, Any]:
    """Typical arguments for each core tool on a w x h image named 'original'."""
    box = [w // 4, h // 4, 3 * w // 4, 3 * h // 4]
    return {
        "crop": {"image": "original", "box": box},
        "draw_line": {"image": "original", "start": [0, 0], "end": [w - 1, h - 1], "width": 3},
        "draw_rectangle": {"image": "original", "box": box},
        "draw_circle": {"image": "original", "center": [w // 2, h // 2], "radius": min(w, h) // 4},
        "draw_text": {"image": "original", "position": [10, 10], "text": "A", "size": 32},
        "convert_grayscale": {"image": "original"},
        "get_image_size": {"image": "original"},
        "overlay_images": {"base": "original", "overlay": "original", "box": [0, 0, w // 2, h // 2]},
        "compare_crops": {"crops": [{"image": "original", "box": [0, 0, w // 4, h // 4]},
                                    {"image": "original", "box": [w // 2, h // 2, 3 * w // 4, 3 * h // 4]}]},
    }[tool]


def photo(w: int, h: int) -> Image.Image:
    """Smooth gradients plus mild noise: compresses like a photograph, not like a flat test card."""
    x = np.linspace(0, 255, w, dtype=np.float32)[None, :]
    y = np.linspace(0, 255, h, dtype=np.float32)[:, None]
    noise = np.random.default_rng(0).integers(-6, 7, (h, w), dtype=np.int16)
    rgb = np.empty((h, w, 3), np.uint8)
    for channel, base in enumerate((x + 0 * y, y + 0 * x, (x + y) / 2)):
        rgb[..., channel] = np.clip(base + noise, 0, 255)
    return Image.fromarray(rgb, "RGB")


class DirectContext:
    """What a tool sees, minus the registry: the image is in a dict and copied on read, as Pillow code would."""

    def __init__(self, images: dict[str, Image.Image], limits: Limits):
        self.images, self.limits, self.parents = images, limits, []

    def image(self, image_id: str, argument: str = "image") -> Image.Image:
        return self.images[image_id].copy()

    def size(self, image_id: str, argument: str = "image") -> tuple[int, int]:
        return self.images[image_id].size


def direct_call(fn: Callable, images: dict[str, Image.Image], arguments: dict[str, Any], limits: Limits) -> None:
    """The tool function on a Pillow image, then the same PNG the server would send (preview included)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    kwargs = {k: TypeAdapter(hints[k]).validate_python(v) for k, v in arguments.items()}
    out = fn(DirectContext(images, limits), **kwargs)
    if out.image is not None:
        encode_png(preview(out.image, limits.max_preview_side))


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def timed(call) -> float:
    """Seconds one call takes (sync or async)."""
    start = time.perf_counter()
    result = call()
    if hasattr(result, "__await__"):
        result = await result
        assert not result.is_error, result.content[0].text
    return time.perf_counter() - start


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(root: Path):
    port = free_port()
    proc = subprocess.Popen([SERVER, "--http", "--port", str(port), "--root", str(root), *LIMIT_FLAGS],
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


async def tool_table(root: Path, reps: dict[tuple[int, int], int]) -> list[dict[str, Any]]:
    limits = Limits.from_env({}, max_session_bytes=64 * GiB, max_images=5000)
    app = create_app(ServerConfig(limits=limits, roots=[root], tags=["core"]))
    tools = {name: spec.fn for name, spec in app.tools.items()}
    images = {size: photo(*size) for size in SIZES}
    for size, im in images.items():
        im.save(root / f"{size[0]}x{size[1]}.png", compress_level=1)
    rows = []
    stdio = StdioServerParameters(command=SERVER, args=["--root", str(root), *LIMIT_FLAGS])
    with http_server(root) as url:
        async with Client(app.mcp) as memory, Client(stdio) as over_stdio, Client(url) as over_http:
            work = [(size, tool) for size in SIZES for tool in tools]
            clients = {"memory": memory, "stdio": over_stdio, "http": over_http}
            for size, tool in tqdm(work, desc="tools", file=sys.stderr):
                arguments = tool_arguments(tool, *size)
                path = f"{size[0]}x{size[1]}.png"
                sessions = {}
                for name, client in clients.items():
                    opened = await client.call_tool("open_session", {"source": path})
                    sessions[name] = opened.structured_content["session"]
                calls = {"direct": partial(direct_call, tools[tool], {"original": images[size]}, arguments, limits)}
                for name, client in clients.items():
                    calls[name] = partial(client.call_tool, tool, {"session": sessions[name], **arguments})
                samples: dict[str, list[float]] = {name: [] for name in calls}
                for rep in range(reps[size] + 1):  # round-robin, so load changes hit every column alike
                    for name, call in calls.items():
                        seconds = await timed(call)
                        if rep:  # the first round warms up
                            samples[name].append(seconds)
                for name, client in clients.items():
                    await client.call_tool("close_session", {"session": sessions[name]})
                rows.append({"tool": tool, "size": f"{size[0]}x{size[1]}"}
                            | {name: median_ms(values) for name, values in samples.items()})
    app.registry.close()
    return rows


def print_tool_table(rows: list[dict[str, Any]]) -> None:
    print("| tool | size | direct ms | in-memory ms (×) | stdio ms (×) | HTTP ms (×) |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        cells = [f"{r[k]:.1f} ({r[k] / r['direct']:.2f}×)" for k in ("memory", "stdio", "http")]
        print(f"| {r['tool']} | {r['size']} | {r['direct']:.1f} | " + " | ".join(cells) + " |")


def peak_rss() -> int:
    """This process's peak resident set size in bytes (VmHWM: unlike ru_maxrss, not inherited over fork+exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def memory_child(path: str, budget: int, versions: int) -> dict[str, Any]:
    """In a fresh process: one session, `versions` derived 4000x3000 images; report peak RSS and spill."""
    root = Path(path).parent
    limits = Limits.from_env({}, memory_budget=budget, max_session_bytes=64 * GiB, max_images=versions + 1)
    app = create_app(ServerConfig(limits=limits, roots=[root], tags=["core"]))
    startup = peak_rss()
    async with Client(app.mcp) as client:
        opened = await client.call_tool("open_session", {"source": Path(path).name})
        session = opened.structured_content["session"]
        image = "original"
        for i in range(versions):
            result = await client.call_tool("draw_line", {"session": session, "image": image,
                                                          "start": [i * 10, 0], "end": [3999 - i * 10, 2999]})
            assert not result.is_error, result.content[0].text
            image = result.structured_content["image"]
        held = sum(r.width * r.height * len(r.mode) for r in app.registry.records(session))
        spilled = sum(p.stat().st_size for p in app.registry._pixels._dir.iterdir())
        in_ram = app.registry.bytes_in_memory
    app.registry.close()
    return {"budget": budget, "versions": versions, "held": held, "in_ram": in_ram, "spilled": spilled,
            "startup_rss": startup, "peak_rss": peak_rss()}


def memory_rows(budgets: list[int], versions: int) -> list[dict[str, Any]]:
    """One fresh process per budget, so each peak RSS is its own (the test image is written here, outside it)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.png"
        photo(4000, 3000).save(path, compress_level=1)
        for budget in tqdm(budgets, desc="memory", file=sys.stderr):
            done = subprocess.run([sys.executable, __file__, "--memory-child", str(path), str(budget),
                                   str(versions)], capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return rows


def print_memory_table(rows: list[dict[str, Any]]) -> None:
    print("| memory_budget | versions | pixel bytes held | in RAM | spilled to disk | RSS at start-up | peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['budget'] / MiB:.0f} MiB | {r['versions']} | {r['held'] / MiB:.0f} MiB | "
              f"{r['in_ram'] / MiB:.0f} MiB | {r['spilled'] / MiB:.0f} MiB | {r['startup_rss'] / MiB:.0f} MiB | "
              f"{r['peak_rss'] / MiB:.0f} MiB |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and one memory budget")
    parser.add_argument("--memory-child", nargs=3, metavar=("PATH", "BUDGET", "VERSIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.disable(logging.INFO)  # the SDK logs every HTTP request and tool failure at INFO
    if args.memory_child:
        path, budget, versions = args.memory_child
        print(json.dumps(anyio.run(memory_child, path, int(budget), int(versions))))
        return
    reps = {SIZES[0]: 5, SIZES[1]: 2} if args.quick else {SIZES[0]: 11, SIZES[1]: 5}
    with tempfile.TemporaryDirectory() as tmp:
        rows = anyio.run(tool_table, Path(tmp), reps)
    print(f"\nMedian wall time per call ({reps[SIZES[0]]} / {reps[SIZES[1]]} repetitions); "
          "× = ratio to the direct call\n")
    print_tool_table(rows)
    budgets = [256 * MiB] if args.quick else [256 * MiB, Limits().memory_budget]
    print("\nOne session holding 200 derived versions of a 4000x3000 image (draw_line on the previous one)\n")
    print_memory_table(memory_rows(budgets, 200))


if __name__ == "__main__":
    main()
