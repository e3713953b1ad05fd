"""Tool-call throughput of `trompe-server --http` replicas sharing one Redis registry, against one replica.

Rows: one replica on the default memory registry (baseline), one replica on Redis, two replicas on Redis.
C clients (the official MCP client over streamable HTTP, all in this process) each open a session and make
crop/draw calls on a 512x512 image; with two replicas, client i opens its session on one replica and makes
its calls on the other, so every call also exercises the shared registry. Same machine, 2 cores: the load
generator competes with the servers for CPU, so the ratio is a lower bound for separate machines. Beside
calls/s, the CPU time of the processes this bench started (itself, Redis, the replicas: bench/proctree.py,
not the other jobs on the machine) gives calls per CPU-second. The time each session operation takes inside
Redis with 10k to 1M sessions registered is bench/redis_sessions.py's.

    python bench/registry_replicas.py [--clients 8] [--calls 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from PIL import Image
from proctree import ProcessTree

SERVER = str(Path(sys.executable).with_name("trompe-server"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"port {port} did not open: {proc.args}")


@contextmanager
def processes(commands: list[tuple[list[str], int]]):
    """Start each command, wait for its port, stop them all (SIGTERM) at the end."""
    procs = []
    try:
        for argv, port in commands:
            procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_for(port, procs[-1])
        yield
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)


def image_url(side: int = 512) -> str:
    im = Image.radial_gradient("L").resize((side, side)).convert("RGB")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


async def drive(urls: list[str], clients: int, calls: int) -> tuple[float, float]:
    """Calls per second over all clients and calls per CPU-second of every process started (session opening
    excluded from both)."""
    source = image_url()
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=300)))
        connections = [await stack.enter_async_context(Client(streamable_http_client(u, http_client=http)))
                       for u in urls]
        pairs = [(connections[i % len(urls)], connections[(i + 1) % len(urls)]) for i in range(clients)]
        sessions = [(await opener.call_tool("open_session", {"source": source})).structured_content["session"]
                    for opener, _ in pairs]

        async def work(client: Client, session: str) -> None:
            for k in range(calls):
                name, arguments = (("crop", {"box": [k, k, 256 + k, 256 + k]}) if k % 2 else
                                   ("draw_line", {"start": [0, k], "end": [511, k], "color": "red"}))
                result = await client.call_tool(name, {"session": session, "image": "original", **arguments})
                if result.is_error:
                    raise SystemExit(f"{name} failed: {result.content[0].text}")

        tree = ProcessTree()
        started, cpu = time.perf_counter(), tree.cpu_seconds()
        await asyncio.gather(*(work(caller, s) for (_, caller), s in zip(pairs, sessions)))
        seconds, cpu = time.perf_counter() - started, tree.cpu_seconds() - cpu
        return clients * calls / seconds, clients * calls / cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent MCP clients (default 8)")
    parser.add_argument("--calls", type=int, default=20, help="tool calls per client per run (default 20)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting, interleaved; the median is shown")
    args = parser.parse_args(argv)
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed (Debian: apt-get install redis-server)")
    with tempfile.TemporaryDirectory() as tmp:
        redis_port = free_port()
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
        redis = ([shutil.which("redis-server"), "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                  "--appendonly", "no", "--dir", tmp], redis_port)

        def replica(registry: str) -> tuple[list[str], int]:
            port = free_port()
            return [SERVER, "--http", "--port", str(port), "--registry", registry, "--root", tmp,
                    "--max-sessions-per-client", "1000"], port

        settings = {"1 replica, memory registry": [replica("memory")],
                    "1 replica, Redis registry": [replica(redis_url)],
                    "2 replicas, Redis registry": [replica(redis_url), replica(redis_url)]}
        rates: dict[str, list[tuple[float, float]]] = {name: [] for name in settings}
        with processes([redis] + [c for group in settings.values() for c in group]):
            for _ in range(args.repeat):
                for name, group in settings.items():
                    urls = [f"http://127.0.0.1:{port}/mcp" for _, port in group]
                    rates[name].append(asyncio.run(drive(urls, args.clients, args.calls)))
        print(f"{args.clients} clients x {args.calls} calls (crop / draw_line on 512x512), median of {args.repeat} "
              "interleaved runs, one machine\n")
        print("| setting | calls/s | vs 1 replica (memory) | vs 1 replica (Redis) | calls per CPU-second "
              "| vs 1 replica (memory) |")
        print("|---|---:|---:|---:|---:|---:|")
        medians = {name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
                   for name, r in rates.items()}
        (base, base_cpu), (redis_one, _) = medians["1 replica, memory registry"], medians["1 replica, Redis registry"]
        for name, (rate, per_cpu) in medians.items():
            print(f"| {name} | {rate:.1f} | {rate / base:.2f}x | {rate / redis_one:.2f}x | {per_cpu:.1f} | "
                  f"{per_cpu / base_cpu:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
