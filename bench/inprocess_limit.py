"""A tool call without any protocol against its physical limit: what the server itself adds to the op + encoder.

`server_tools.py --trompe-client` compares a call over stdio with the physical limit (the tool's function and
trompe's encoder in one process). This runs the same call through trompe's in-process tool path (no JSON-RPC, no
base64, no pipe) in a process tuned as a serving trompe-server is (malloc, Pillow's block cache), and the limit
beside it, alternating, so the difference is the registry's share (storing the result, lineage, the reply's
preview) and the rest of a stdio call is the protocol's. CPU of this one process per call, medians of rounds.

    python bench/inprocess_limit.py --size 1024x1024 --tools crop,compare_crops,isolate_color,get_image_size
"""

from __future__ import annotations

import argparse
import asyncio
import io
import resource
import statistics
import time

from PIL import Image
from sample_images import photo
from server_tools import physical_limit, tool_arguments

from trompe_agents.toolclient import ToolClient
from trompe_server.admission import return_freed_pixels_to_the_os
from trompe_server.limits import Limits
from trompe_server.pixel_blocks import keep_freed_blocks


def faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


async def measure(tool: str, png: bytes, size: tuple[int, int], calls: int, rounds: int) -> dict[str, float]:
    """Median CPU ms and minor faults per call of each path, over `rounds` alternating rounds of `calls`."""
    arguments = tool_arguments(tool, *size)
    image = Image.open(io.BytesIO(png))
    image.load()
    per: dict[str, list[float]] = {"in-process": [], "limit": []}
    paged: dict[str, list[float]] = {"in-process": [], "limit": []}
    async with ToolClient.in_process() as client:
        session = (await client.open_session({"original": png})).id
        fn = client._app.tools[tool].fn
        limits = Limits()

        async def served() -> None:
            await client.call(session, tool, arguments)

        async def limit() -> None:
            physical_limit(fn, {"original": image}, arguments, limits)

        for run in (served, limit):  # warm both paths
            await run()
        for _ in range(rounds):
            for name, run in (("in-process", served), ("limit", limit)):
                start, paged_before = time.process_time(), faults()
                for _ in range(calls):
                    await run()
                per[name].append((time.process_time() - start) / calls * 1000)
                paged[name].append((faults() - paged_before) / calls)
    return {**{name: statistics.median(v) for name, v in per.items()},
            **{f"{name} faults": statistics.median(v) for name, v in paged.items()}}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1024x1024", help="W x H of the photo (default 1024x1024)")
    parser.add_argument("--tools", default="crop,compare_crops,isolate_color,get_image_size,draw_line")
    parser.add_argument("--calls", type=int, default=10, help="calls per round (default 10)")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds; medians are printed (default 7)")
    args = parser.parse_args()
    size = tuple(int(n) for n in args.size.lower().split("x"))
    return_freed_pixels_to_the_os()  # as a serving trompe-server tunes its process
    keep_freed_blocks()
    buffer = io.BytesIO()
    Image.fromarray(photo(*size)).save(buffer, "PNG", compress_level=1)
    print(f"{args.size}, CPU ms per call of this process, medians of {args.rounds} rounds of {args.calls}\n")
    print("| tool | limit ms | in-process ms | × limit | faults / call (limit → in-process) |")
    print("|---|---:|---:|---:|---:|")
    for tool in args.tools.split(","):
        m = await measure(tool, buffer.getvalue(), size, args.calls, args.rounds)
        print(f"| {tool} | {m['limit']:.2f} | {m['in-process']:.2f} | {m['in-process'] / m['limit']:.2f}× | "
              f"{m['limit faults']:.0f} → {m['in-process faults']:.0f} |")
    print(f"\nload average {open('/proc/loadavg').read().split()[0]}")


if __name__ == "__main__":
    asyncio.run(main())
