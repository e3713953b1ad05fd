"""Benchmark: tool calls against the raw floor and two peer MCP image servers, at image sizes 256² to 48 MP.

The raw floor is the same Pillow operation plus a full PNG encode with Pillow, in-process: what a script
that draws and saves with Pillow pays. The physical limit is the same operation plus trompe's own encoder of
the reply it sends (the preview above max_preview_side), in-process: what trompe cannot go below, printed with
each trompe column's ratio to it. trompe's columns go through the official MCP client in memory, over
stdio and over HTTP (real `trompe-server` processes) and return pixels; the peers (ImageSorcery MCP and
ziplab/DDP's FastMCP server, run from a bench-only venv) read a file path and write a PNG file, returning
its path. With --baseline DIR an earlier trompe (e.g. `git archive HEAD | tar -x -C DIR`) is served over
stdio beside the current one. With --line-client every stdio server is also called through a plain JSON-RPC
client with linear buffering (lineclient.py says why), with --trompe-client through trompe's own (the official
client over trompe_agents.stdio_lines), with --zero-copy through trompe's ToolClient asking for shared pixels
(trompe/shared-pixels: each image comes back as a sealed memfd it maps read-only, no PNG). Calls go round-robin
after one warm-up round, so load hits every column alike. With --cpu the tables are CPU time per call instead
of wall time (what to trust on a shared box): this process's (client, and the whole in-memory column) plus the
server process's, read from /proc; a second table gives the servers' own CPU and minor page faults per call.

Also the peak memory (RSS) of one session holding 200 derived versions of a 4000x3000 image, to show the
memory budget and spill to disk keep the server bounded.

    python bench/server_tools.py --quick --peer-venv /work/bench-venv --ddp-server /path/to/DDP/src/mcp_server.py
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import resource
import shutil
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
from mcp import Client, StdioServerParameters
from lineclient import LineClient
from PIL import Image
from proctree import descendants
from pydantic import TypeAdapter
from sample_images import photo
from tqdm import tqdm
from trompe_agents.stdio_lines import linear_stdio_client
from trompe_agents.toolclient import ToolClient

from trompe_server.app import ServerConfig, create_app
from trompe_server.encode import encode_png, preview
from trompe_server.limits import GiB, MiB, Limits

SIZES = [(256, 256), (1024, 1024), (2000, 1500), (4000, 3000), (8000, 6000)]
PEER_TOOLS = ["crop", "draw_line", "draw_rectangle", "convert_grayscale", "blur", "get_image_size"]  # a peer has them
BLUR_SIGMA = 8  # blur's default radius: the Gaussian's standard deviation
BLUR_KERNEL = 51  # the odd OpenCV kernel size whose default sigma, 0.3 * ((k - 1) / 2 - 1) + 0.8, is 8
SERVER = str(Path(sys.executable).with_name("trompe-server"))
LIMIT_FLAGS = ["--max-session-bytes", "64GiB", "--max-images", "5000", "--max-source-bytes", "1GiB"]


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
        "overlay_grid": {"image": "original"},
        "sample_color": {"image": "original", "points": [[w // 4, h // 4], [w // 2, h // 2]], "radius": 3},
        "extract_channel": {"image": "original", "channel": "H"},
        "isolate_color": {"image": "original", "color": "#5a8cc8"},
        "blur": {"image": "original", "radius": BLUR_SIGMA},
    }[tool]


def peer_calls(tool: str, path: Path, out: Path, w: int, h: int) -> dict[str, tuple[str, dict[str, Any]]]:
    """The same operation as `tool` in each peer's own tool, for the peers that have one (DDP has no free line:
    one vertical guide line; ImageSorcery's blur is OpenCV's Gaussian over an area, here the whole image, with the
    kernel size OpenCV derives the same sigma from)."""
    x0, y0, x1, y1 = w // 4, h // 4, 3 * w // 4, 3 * h // 4
    red = [0, 0, 255]  # BGR
    sorcery = {
        "crop": ("crop", {"x1": x0, "y1": y0, "x2": x1, "y2": y1}),
        "draw_line": ("draw_lines", {"lines": [{"x1": 0, "y1": 0, "x2": w - 1, "y2": h - 1, "color": red,
                                                "thickness": 3}]}),
        "draw_rectangle": ("draw_rectangles", {"rectangles": [{"x1": x0, "y1": y0, "x2": x1 - 1, "y2": y1 - 1,
                                                               "color": red, "thickness": 2}]}),
        "convert_grayscale": ("change_color", {"palette": "grayscale"}),
        "blur": ("blur", {"areas": [{"x1": 0, "y1": 0, "x2": w, "y2": h, "blur_strength": BLUR_KERNEL}]}),
        "get_image_size": ("get_metainfo", {}),  # reads, writes nothing
    }
    ddp = {
        "crop": ("crop_image", {"bbox_list": [[x0, y0, x1, y1]]}),
        "draw_line": ("gridmask", {"xp": [w // 2]}),
        "draw_rectangle": ("draw_rectangle", {"bboxes": [[x0, y0, x1 - 1, y1 - 1]]}),
    }
    calls = {}
    if tool in sorcery:
        name, arguments = sorcery[tool]
        written = {} if name == "get_metainfo" else {"output_path": str(out / f"{tool}.png")}
        calls["imagesorcery"] = (name, {"input_path": str(path)} | written | arguments)
    if tool in ddp:
        calls["ddp"] = (ddp[tool][0], {"image_path": str(path)} | ddp[tool][1])
    return calls


class DirectContext:
    """What a tool sees, minus the registry: the image is in a dict, copied to draw on and read as it is (crop),
    as Pillow code would."""

    def __init__(self, images: dict[str, Image.Image], limits: Limits):
        self.images, self.limits, self.parents = images, limits, []

    def image(self, image_id: str, argument: str = "image") -> Image.Image:
        return self.images[image_id].copy()

    def view(self, image_id: str, argument: str = "image") -> Image.Image:
        return self.images[image_id]

    def size(self, image_id: str, argument: str = "image") -> tuple[int, int]:
        return self.images[image_id].size


def raw_floor(fn: Callable, images: dict[str, Image.Image], arguments: dict[str, Any], limits: Limits) -> None:
    """The tool's Pillow operation on a copy, then Pillow's own PNG encode of the full-size result."""
    hints = typing.get_type_hints(fn, include_extras=True)
    kwargs = {k: TypeAdapter(hints[k]).validate_python(v) for k, v in arguments.items()}
    out = fn(DirectContext(images, limits), **kwargs)
    if out.image is not None:
        out.image.save(io.BytesIO(), format="PNG", compress_level=1)


def physical_limit(fn: Callable, images: dict[str, Image.Image], arguments: dict[str, Any], limits: Limits) -> None:
    """The least a tool call can cost: the tool's operation on a copy, then the reply trompe sends (the preview
    above max_preview_side) through trompe's own encoder, in one process: no server, no protocol, no base64."""
    hints = typing.get_type_hints(fn, include_extras=True)
    kwargs = {k: TypeAdapter(hints[k]).validate_python(v) for k, v in arguments.items()}
    out = fn(DirectContext(images, limits), **kwargs)
    if out.image is not None:
        encode_png(preview(out.image, limits.max_preview_side))


def server_usage(pid: int | None) -> tuple[dict[str, int], int]:
    """Nanoseconds each live thread of a server process has run so far, and its minor page faults; empty for none.

    CPU is per thread, from /proc/<pid>/task/*/schedstat (nanoseconds; /proc/<pid>/stat counts in 10 ms ticks,
    coarser than a 1024x1024 call), so a call is charged only what its threads ran during it (`ran_between`).
    """
    if pid is None:
        return {}, 0
    ran = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a thread that has just ended
            ran[task.name] = int((task / "schedstat").read_text().split()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return ran, int(fields[7])


def ran_between(before: dict[str, int], after: dict[str, int]) -> float:
    """CPU seconds the threads alive at the end ran since `before` (new ones: all of it).

    A thread gone by the end is counted as having done nothing meanwhile: anyio stops a worker thread idle for
    over 10 s when the next call starts, and subtracting its whole past (what a sum over live threads did) made
    48 MP calls, whose rounds take longer than that, read a few ms."""
    return sum(ns - before.get(tid, 0) for tid, ns in after.items()) / 1e9


async def timed(call, pid: int | None = None) -> dict[str, float]:
    """One call (sync or async): its wall seconds, CPU seconds of this process and of the server `pid`, and
    the server's minor page faults."""
    start, cpu, (threads, faults) = time.perf_counter(), time.process_time(), server_usage(pid)
    result = call()
    if hasattr(result, "__await__"):
        result = await result
        assert not result.is_error, result.content
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    threads_after, faults_after = server_usage(pid)
    served = ran_between(threads, threads_after)
    return {"wall": wall, "cpu": cpu + served, "server": served, "faults": faults_after - faults}


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


def silenced(command: str, args: list[str], **options: Any) -> StdioServerParameters:
    """A stdio server whose log lines (stderr) are dropped, so the progress bar stays readable."""
    return StdioServerParameters(command="sh", args=["-c", 'exec "$0" "$@" 2>/dev/null', command, *args], **options)


def stdio_servers(root: Path, args: argparse.Namespace) -> dict[str, StdioServerParameters]:
    """Every stdio server of the run: trompe, optionally the baseline trompe, and the peers that were given."""
    quiet = {"PATH": os.environ["PATH"], "HOME": str(root), "FASTMCP_LOG_LEVEL": "WARNING",
             "DISABLE_TELEMETRY": "1"}  # ImageSorcery's: no network attempts in its column
    # The whole environment: the SDK's default passes on only HOME, PATH, SHELL and TERM, so without it a
    # checkout run through PYTHONPATH served the venv's installed trompe, not itself.
    servers = {"stdio": silenced(SERVER, ["--root", str(root), *LIMIT_FLAGS], env=dict(os.environ))}
    if args.baseline:
        code = args.baseline.resolve()
        path = os.pathsep.join(str(code / part) for part in ("servers", "plugins", "agents", "prompts"))
        servers = {"before (stdio)": silenced(sys.executable, ["-c", "from trompe_server.cli import main; main()",
                                                              "--root", str(root), *LIMIT_FLAGS],
                                              env=dict(os.environ) | {"PYTHONPATH": path})} | servers
    if args.peer_venv:
        servers["imagesorcery"] = silenced(str(args.peer_venv / "bin" / "imagesorcery-mcp"), [], cwd=str(root),
                                           env=quiet)
    if args.ddp_server:
        script = root / "ddp" / "src" / "mcp_server.py"  # writes into ../mcp_output: keep that in the temp dir
        script.parent.mkdir(parents=True)
        shutil.copy(args.ddp_server, script)
        python = args.peer_venv / "bin" / "python" if args.peer_venv else Path(sys.executable)
        servers["ddp"] = silenced(str(python), [str(script)], cwd=str(root), env=quiet)
    return servers


def started(before: set[int]) -> int:
    """The one child this process started since `before` (a snapshot of descendants()): the server."""
    new = [pid for pid in descendants(os.getpid()) - before
           if int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid()]
    assert len(new) == 1, new
    return new[0]


async def tool_table(root: Path, args: argparse.Namespace, reps: dict[tuple[int, int], int]
                     ) -> dict[str, list[dict[str, Any]]]:
    limits = Limits.from_env({}, max_session_bytes=64 * GiB, max_images=5000, max_source_bytes=GiB)
    app = create_app(ServerConfig(limits=limits, roots=[root], tags=["core", "analysis"]))
    tools = {name: spec.fn for name, spec in app.tools.items()}
    sizes = [s for s in SIZES if s in reps]
    chosen = args.tools or [name for name, spec in app.tools.items() if "core" in spec.tags]
    work = [(size, tool) for size in sizes for tool in PEER_TOOLS if tool in chosen]
    others = sizes if args.sizes else [s for s in [(1024, 1024)] if s in reps]  # by default 1024² only
    work += [(size, tool) for size in others for tool in chosen if tool not in PEER_TOOLS]
    outputs = root / "out"
    outputs.mkdir()
    rows: dict[str, list[dict[str, Any]]] = {"wall": [], "cpu": [], "server": [], "faults": []}
    # in-process: this process's CPU is all of it
    pids: dict[str, int | None] = {"floor": None, "physical": None, "memory": None}
    async with contextlib.AsyncExitStack() as stack:
        clients = {"memory": await stack.enter_async_context(Client(app.mcp))}

        async def connect(name: str, context: Any) -> None:
            before = descendants(os.getpid())
            clients[name] = await stack.enter_async_context(context)
            pids[name] = started(before)

        async def connect_http() -> None:
            before = descendants(os.getpid())
            url = stack.enter_context(http_server(root))
            pids["http"] = started(before)
            clients["http"] = await stack.enter_async_context(Client(url))

        for name, params in stdio_servers(root, args).items():
            if name == "imagesorcery" and not args.skip_http:  # column order: trompe's transports first, then the peers
                await connect_http()
            await connect(name, Client(params))
            if args.line_client:
                await connect(f"{name}, line client", LineClient(params.command, params.args, params.env, params.cwd))
            if args.trompe_client:
                await connect(f"{name}, trompe client", Client(linear_stdio_client(params)))
            if args.zero_copy and name == "stdio":
                shared = ToolClient(params, label="zero-copy")
                shared.shared_pixels = True
                await connect("stdio, zero-copy", shared)
        if "http" not in clients and not args.skip_http:
            await connect_http()
        for size, tool in tqdm(work, desc="tools", file=sys.stderr):
            path = root / f"{size[0]}x{size[1]}.png"
            if not path.exists():
                Image.fromarray(photo(*size)).save(path, compress_level=1)
            image = Image.open(path)
            image.load()
            arguments = tool_arguments(tool, *size)
            peers = peer_calls(tool, path, outputs, *size)
            calls = {"floor": partial(raw_floor, tools[tool], {"original": image}, arguments, limits),
                     "physical": partial(physical_limit, tools[tool], {"original": image}, arguments, limits)}
            sessions = {}
            for name, client in clients.items():
                peer = name.split(",")[0]
                if peer in ("imagesorcery", "ddp"):
                    if peer in peers:
                        calls[name] = partial(client.call_tool, *peers[peer])
                    continue
                opened = await mcp_client(client).call_tool("open_session", {"source": path.name})
                sessions[name] = opened.structured_content["session"]
                calls[name] = (partial(client.call, sessions[name], tool, arguments) if isinstance(client, ToolClient)
                               else partial(client.call_tool, tool, {"session": sessions[name], **arguments}))
            samples: dict[str, list[dict[str, float]]] = {name: [] for name in calls}
            for rep in range(reps[size] + 1):  # round-robin, so load changes hit every column alike
                for name, call in calls.items():
                    usage = await timed(call, pids[name])
                    if rep:  # the first round warms up
                        samples[name].append(usage)
            for name, session in sessions.items():
                await mcp_client(clients[name]).call_tool("close_session", {"session": session})
            for leftover in [*outputs.iterdir(), *(root / "ddp" / "mcp_output").glob("*.png")]:
                leftover.unlink()
            for metric, table in rows.items():
                scale = 1 if metric == "faults" else 1000
                table.append({"tool": tool, "size": f"{size[0]}x{size[1]}"}
                             | {name: statistics.median(s[metric] for s in values) * scale
                                for name, values in samples.items()})
    app.registry.close()
    return rows


def mcp_client(client: Client | ToolClient) -> Client:
    """The MCP client to open and close sessions with (a ToolClient's own, for the zero-copy column)."""
    return client.client if isinstance(client, ToolClient) else client


def print_tool_table(rows: list[dict[str, Any]]) -> None:
    columns = [c for c in rows[0] if c not in ("tool", "size", "floor", "physical")]
    print("| tool | size | raw floor ms | " + " | ".join(f"{c} ms (× floor)" for c in columns) + " |")
    print("|---|---|---:|" + "---:|" * len(columns))
    for r in rows:
        cells = [f"{r[k]:.1f} ({r[k] / r['floor']:.2f}×)" if k in r else "–" for k in columns]
        print(f"| {r['tool']} | {r['size']} | {r['floor']:.1f} | " + " | ".join(cells) + " |")


def print_physical_table(rows: list[dict[str, Any]]) -> None:
    """trompe's columns against the physical limit (op + trompe's encoder in one process), and that limit's own
    ratio to the Pillow floor."""
    columns = [c for c in rows[0] if c not in ("tool", "size", "floor", "physical")
               and c.split(",")[0] not in ("imagesorcery", "ddp")]
    print("| tool | size | physical limit ms (× floor) | " + " | ".join(f"{c} × limit" for c in columns) + " |")
    print("|---|---|---:|" + "---:|" * len(columns))
    for r in rows:
        cells = [f"{r[k] / r['physical']:.2f}×" if k in r else "–" for k in columns]
        print(f"| {r['tool']} | {r['size']} | {r['physical']:.1f} ({r['physical'] / r['floor']:.2f}×) | "
              + " | ".join(cells) + " |")


def print_server_table(server: list[dict[str, Any]], faults: list[dict[str, Any]]) -> None:
    """Each server process's own CPU ms and minor page faults per call (in-process columns left out)."""
    columns = [c for c in server[0] if c not in ("tool", "size", "floor", "physical", "memory")]
    print("| tool | size | " + " | ".join(f"{c} server CPU ms (faults)" for c in columns) + " |")
    print("|---|---|" + "---:|" * len(columns))
    for cpu, fault in zip(server, faults):
        cells = [f"{cpu[k]:.1f} ({fault[k]:.0f})" if k in cpu else "–" for k in columns]
        print(f"| {cpu['tool']} | {cpu['size']} | " + " | ".join(cells) + " |")


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
        spilled = sum(p.stat().st_size for p in app.registry.storage.spill_dir.iterdir())
        in_ram = app.registry.bytes_in_memory
    app.registry.close()
    return {"budget": budget, "versions": versions, "held": held, "in_ram": in_ram, "spilled": spilled,
            "startup_rss": startup, "peak_rss": peak_rss()}


def memory_rows(budgets: list[int], versions: int) -> list[dict[str, Any]]:
    """One fresh process per budget, so each peak RSS is its own (the test image is written here, outside it)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.png"
        Image.fromarray(photo(4000, 3000)).save(path, compress_level=1)
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
    parser.add_argument("--largest", type=int, default=len(SIZES), metavar="N",
                        help=f"time the first N image sizes only (default all {len(SIZES)}, up to 8000x6000)")
    parser.add_argument("--sizes", type=lambda text: [tuple(map(int, s.split("x"))) for s in text.split(",")],
                        metavar="WxH,...", help="only these of the sizes (e.g. 1024x1024,8000x6000)")
    parser.add_argument("--repeat", type=int, metavar="N", help="N repetitions at every size (default: by size)")
    parser.add_argument("--baseline", type=Path, help="folder with an earlier trompe checkout, served over stdio")
    parser.add_argument("--peer-venv", type=Path, help="venv with imagesorcery-mcp (and the DDP server's needs)")
    parser.add_argument("--ddp-server", type=Path, help="ziplab/DDP's src/mcp_server.py, run with --peer-venv")
    parser.add_argument("--skip-memory", action="store_true", help="leave out the memory table")
    parser.add_argument("--skip-http", action="store_true", help="leave out the HTTP column")
    parser.add_argument("--line-client", action="store_true",
                        help="also call every stdio server through a linear-buffered JSON-RPC client (lineclient.py)")
    parser.add_argument("--trompe-client", action="store_true",
                        help="also call every stdio server through trompe's own client (mcp.Client over the "
                             "linear-time transport of trompe_agents.stdio_lines, as ToolClient.stdio does)")
    parser.add_argument("--zero-copy", action="store_true",
                        help="also call the stdio server through trompe's ToolClient with shared pixels (the "
                             "result's full-size pixels mapped read-only from a sealed memfd, no PNG)")
    parser.add_argument("--tools", type=lambda names: names.split(","), metavar="A,B",
                        help="only these tools (default: the core tools; overlay_grid and sample_color also work)")
    parser.add_argument("--cpu", action="store_true",
                        help="CPU time per call (client + server, from /proc) instead of wall time, and each "
                             "server's own CPU and page faults")
    parser.add_argument("--memory-child", nargs=3, metavar=("PATH", "BUDGET", "VERSIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.disable(logging.INFO)  # the SDK logs every HTTP request and tool failure at INFO
    if args.memory_child:
        path, budget, versions = args.memory_child
        print(json.dumps(anyio.run(memory_child, path, int(budget), int(versions))))
        return
    counts = [5, 3, 2, 1, 1] if args.quick else [11, 7, 5, 3, 1]
    reps = {size: args.repeat or n for size, n in list(zip(SIZES, counts))[:args.largest]
            if args.sizes is None or size in args.sizes}
    with tempfile.TemporaryDirectory() as tmp:
        rows = anyio.run(tool_table, Path(tmp), args, reps)
    counted = ", ".join(f"{w}x{h}: {n}" for (w, h), n in reps.items())
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"\nMedian {'CPU' if args.cpu else 'wall'} time per call ({counted} repetitions; load average at the "
          f"end {load}); × = ratio to the raw floor\n")
    print_tool_table(rows["cpu" if args.cpu else "wall"])
    print("\nAgainst the physical limit: the op plus trompe's encoder of the reply (the preview above "
          "max_preview_side), in one process\n")
    print_physical_table(rows["cpu" if args.cpu else "wall"])
    if args.cpu:
        print("\nMedian CPU time and minor page faults of each server process per call\n")
        print_server_table(rows["server"], rows["faults"])
    if args.skip_memory:
        return
    budgets = [256 * MiB] if args.quick else [256 * MiB, Limits().memory_budget]
    print("\nOne session holding 200 derived versions of a 4000x3000 image (draw_line on the previous one)\n")
    print_memory_table(memory_rows(budgets, 200))


if __name__ == "__main__":
    main()
