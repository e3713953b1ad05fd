"""Agent-loop overhead per round with a zero-latency model (the function backend), in-process tool server.

Each round: the fake model asks for a 2x zoomed 256x192 crop of a 1024x768 photo-like image; the server crops,
stores and PNG-encodes the 512x384 result; the loop turns it into a tool message (and, with a trace, writes
the event line and the PNG). "loop" is everything in a round that is neither the model nor the tool call.

    python bench/agent_loop.py --rounds 20 --repeat 5
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from pathlib import Path

import anyio
import numpy as np
from PIL import Image

from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.loop import run_agent
from trompe_agents.toolclient import ToolClient
from trompe_agents.trace import Trace
from trompe_server.encode import encode_png

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def photo(width: int = 1024, height: int = 768) -> bytes:
    """Noise over gradients: compresses like a photo, not like a flat test card."""
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([x * 255 // width, y * 255 // height, (x + y) * 255 // (width + height)], -1)
    pixels = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


class Timed:
    """Wraps the backend and tool client to book each round's time as model / tool / loop."""

    def __init__(self, tools: ToolClient):
        self.tools, self.model_s, self.tool_s, self.setup_s = tools, [], [], []
        for name in ("list_tools", "image_png"):  # once per sample: booked as setup, not per round
            setattr(tools, name, self.clock(getattr(tools, name), self.setup_s))

    @staticmethod
    def clock(fn, into: list[float]):
        async def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                into.append(time.perf_counter() - start)
        return timed

    def backend(self, rounds: int) -> FunctionBackend:
        def decide(messages, tools):
            done = sum(m.role == "tool" for m in messages)
            return tool_call("crop", image="original", box=[128, 96, 384, 288], zoom=2) if done < rounds \
                else {"answer": "done"}

        backend = FunctionBackend(decide)
        backend.complete = self.clock(backend.complete, self.model_s)
        self.tools.call = self.clock(self.tools.call, self.tool_s)
        return backend


async def one_run(image: bytes, rounds: int, traced: bool) -> dict[str, float]:
    async with ToolClient.in_process() as tools:
        timed = Timed(tools)
        backend = timed.backend(rounds)
        with tempfile.TemporaryDirectory() as folder:
            trace = Trace(Path(folder)) if traced else None
            info = await tools.open_session({"original": image})
            start = time.perf_counter()
            result = await run_agent(backend, tools, system="Inspect.", question="Which is longer?",
                                     final_schema=SCHEMA, max_rounds=rounds + 1, trace=trace, session=info.id)
            total = time.perf_counter() - start
        assert result.stop == "answer" and len(result.tool_calls) == rounds, result
    setup = sum(timed.setup_s)
    per_round = (total - setup) / (rounds + 1)
    tool = sum(timed.tool_s) / (rounds + 1)
    model = sum(timed.model_s) / (rounds + 1)
    return {"setup": setup, "round": per_round, "model": model, "tool": tool, "loop": per_round - tool - model}


def png_encode_ms(repeat: int) -> float:
    """The server's own PNG encoder on one result image: the floor under any tool call."""
    crop = Image.open(io.BytesIO(photo())).crop((128, 96, 384, 288)).resize((512, 384), Image.Resampling.NEAREST)
    times = []
    for _ in range(repeat * 5):
        start = time.perf_counter()
        encode_png(crop)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    image = photo()
    anyio.run(one_run, image, 2, False)  # warm up imports and plugin loading
    encode = png_encode_ms(args.repeat)
    print(f"{args.rounds} tool rounds + 1 answer round, median of {args.repeat} runs; "
          f"PNG encode of one 512x384 result alone: {encode:.2f} ms\n")
    print("| configuration | ms/round | model | tool call (MCP + crop + PNG) | loop | loop share of round "
          "| once per sample (tools list + original) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, traced in (("no trace", False), ("trace (JSONL + PNG files)", True)):
        runs = [anyio.run(one_run, image, args.rounds, traced) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) * 1000 for k in runs[0]}
        print(f"| {label} | {med['round']:.2f} | {med['model']:.3f} | {med['tool']:.2f} | {med['loop']:.2f} | "
              f"{med['loop'] / med['round']:.0%} | {med['setup']:.1f} |")


if __name__ == "__main__":
    main()
