"""A 10-round agent sample with a zero-latency model (the function backend): framework CPU against the image work,
through the in-process tool path and through the MCP SDK's in-memory transport, side by side.

A sample is one `run_agent` as `--backend function` runs it: open a session on a 1024x768 photo-like PNG, show
the original to the model (read full size through image://), then each round the model asks for a 2x zoomed
256x192 crop (the server crops, stores and PNG-encodes the 512x384 result, the loop makes it a tool message),
then it answers and the session closes. CPU is this process's (`time.process_time`: every thread, the server's
worker threads included), per sample; samples of the two paths (and with --trace, traced and not) alternate,
after a warm-up, so load falls on each alike.

"Image work" is the same sample's pixels done by a plain script in the same run: decode the input PNG, encode
the original for the model, and per round the crop tool's own function plus trompe's PNG encoder on its result.
"Framework" is the rest: the client, the loop, the tool protocol, the registry, the session.

    python bench/agent_loop.py --rounds 10 --repeat 7 --trace
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import tempfile
import time
from pathlib import Path

import anyio
import numpy as np
from PIL import Image
from server_tools import DirectContext

from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.loop import run_agent
from trompe_agents.toolclient import ToolClient
from trompe_agents.trace import Trace
from trompe_draw.regions import crop
from trompe_server.encode import encode_png
from trompe_server.limits import Limits

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
BOX, ZOOM = [128, 96, 384, 288], 2
PATHS = {"in-process": False, "MCP in-memory": True}  # ToolClient.in_process(mcp=...)


def photo(width: int = 1024, height: int = 768) -> bytes:
    """Noise over gradients: compresses like a photo, not like a flat test card."""
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([x * 255 // width, y * 255 // height, (x + y) * 255 // (width + height)], -1)
    pixels = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


def model(rounds: int) -> FunctionBackend:
    def decide(messages, tools):
        done = sum(m.role == "tool" for m in messages)
        return tool_call("crop", image="original", box=BOX, zoom=ZOOM) if done < rounds else {"answer": "done"}

    return FunctionBackend(decide)


async def sample_cpu(tools: ToolClient, image: bytes, rounds: int, traced: bool) -> float:
    """CPU seconds of one whole sample."""
    with tempfile.TemporaryDirectory() as folder:
        trace = Trace(Path(folder)) if traced else None
        start = time.process_time()
        result = await run_agent(model(rounds), tools, system="Inspect.", question="Which is longer?",
                                 images={"original": image}, final_schema=SCHEMA, max_rounds=rounds + 1, trace=trace)
        cpu = time.process_time() - start
    assert result.stop == "answer" and len(result.tool_calls) == rounds, result
    return cpu


def image_work_cpu(image: bytes, rounds: int) -> float:
    """CPU seconds of the sample's pixels alone: decode, encode the original, crop and encode each round."""
    start = time.process_time()
    original = Image.open(io.BytesIO(image)).convert("RGB")
    encode_png(original)
    context = DirectContext({"original": original}, Limits())
    for _ in range(rounds):
        encode_png(crop(context, "original", BOX, zoom=ZOOM).image)
    return time.process_time() - start


async def measure(image: bytes, rounds: int, repeat: int, traces: list[bool]) -> dict[tuple[str, bool], list[float]]:
    """Samples of every path and trace setting, interleaved; the image work between them."""
    runs: dict[tuple[str, bool] | str, list[float]] = {"image": []}
    async with ToolClient.in_process() as direct, ToolClient.in_process(mcp=True) as mcp:
        clients = {"in-process": direct, "MCP in-memory": mcp}
        for tools in clients.values():  # warm up: imports, plugin loading, the tool list, thread pool
            await sample_cpu(tools, image, 2, True)
        for _ in range(repeat):
            runs["image"].append(image_work_cpu(image, rounds))
            for name, tools in clients.items():
                for traced in traces:
                    runs.setdefault((name, traced), []).append(await sample_cpu(tools, image, rounds, traced))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=7, help="samples per path and setting (medians)")
    parser.add_argument("--trace", action="store_true", help="also samples that write a trace (JSONL + PNGs)")
    args = parser.parse_args()
    image = photo()
    load = [os.getloadavg()[0]]
    runs = anyio.run(measure, image, args.rounds, args.repeat, [False, True] if args.trace else [False])
    load.append(os.getloadavg()[0])
    work = statistics.median(runs.pop("image")) * 1000
    print(f"{args.rounds}-round sample, CPU ms, median of {args.repeat}; image work {work:.1f} ms (decode, "
          f"encode the original, {args.rounds} x crop + PNG encode); load average {load[0]:.1f} at the start, "
          f"{load[1]:.1f} at the end\n")
    print("| tool path | trace | sample CPU ms | framework ms | image work ms | framework ÷ image work "
          "| framework / image work share |")
    print("|---|---|---:|---:|---:|---:|---|")
    for (name, traced), cpus in runs.items():
        sample = statistics.median(cpus) * 1000
        framework = sample - work
        print(f"| {name} | {'JSONL + PNGs' if traced else 'none'} | {sample:.1f} | {framework:.1f} | {work:.1f} | "
              f"{framework / work:.2f} | {framework / sample:.0%} / {work / sample:.0%} |")


if __name__ == "__main__":
    main()
