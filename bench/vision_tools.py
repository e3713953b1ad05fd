"""Latency of the vision tools: tiny random models through the MCP client on CPU, and, with a GPU (or --full),
the full-size architectures (random weights) at batch 1 and 8 with throughput and peak GPU memory.

    python bench/vision_tools.py [--repeat 9] [--full] [--json results.json]
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import anyio
import numpy as np
from mcp import Client
from PIL import Image
from tqdm import tqdm

from trompe_server.app import ServerConfig, create_app

CALLS = {
    "crop (baseline)": ("crop", {"box": [0, 0, 320, 240]}),
    "detect_objects": ("detect_objects", {"query": "cat. red car"}),
    "sliding_window_detection": ("sliding_window_detection", {"query": "cat", "window": 256, "stride": 192}),
    "estimate_depth": ("estimate_depth", {"points": [[10, 10], [600, 400]]}),
    "segment_and_mark (medium)": ("segment_and_mark", {"granularity": "medium", "min_score": 0.0}),
}


def photo(width: int = 640, height: int = 480, seed: int = 0) -> Image.Image:
    """A smooth random image (blurred noise), closer to a photo than a gradient is."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (height // 16, width // 16, 3), dtype=np.uint8)
    return Image.fromarray(small).resize((width, height), Image.Resampling.BICUBIC)


def data_url(im: Image.Image) -> str:
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


async def tool_latencies(repeat: int) -> dict[str, dict[str, float]]:
    """Median wall time per tool call as a client sees it, and the first call (which loads the model)."""
    app = create_app(ServerConfig(plugins=["vision", "draw"]))
    results = {}
    async with Client(app.mcp) as client:
        opened = await client.call_tool("open_session", {"source": data_url(photo())})
        session = opened.structured_content["session"]
        for label, (tool, arguments) in tqdm(CALLS.items(), desc="tools", unit="tool"):
            times = []
            for _ in range(repeat + 1):
                start = time.perf_counter()
                result = await client.call_tool(tool, {"session": session, "image": "original", **arguments})
                times.append(time.perf_counter() - start)
                assert not result.is_error, result.content[0].text
            results[label] = {"first_s": times[0], "median_s": statistics.median(times[1:])}
    app.registry.close()
    return results


def print_tool_table(results: dict[str, dict[str, float]]) -> None:
    base = results["crop (baseline)"]["median_s"]
    print(f"\n{'tool (tiny models, CPU, 640x480)':<34} {'first call ms':>14} {'median ms':>10} {'x crop':>8}")
    for label, r in results.items():
        print(f"{label:<34} {r['first_s'] * 1e3:>14.1f} {r['median_s'] * 1e3:>10.1f} "
              f"{r['median_s'] / base:>8.1f}")


def model_throughput(repeat: int, batches: tuple[int, ...]) -> list[dict[str, float | str | int]]:
    """Full-size architectures through the same loading and inference code the tools use (rows printed
    as they are measured; the first batch size is the baseline of the last column)."""
    import torch

    from trompe_vision.depth import predict_depth
    from trompe_vision.detect import detect
    from trompe_vision.random_models import build_all
    from trompe_vision.runtime import DEPTH, DETECTOR, SEGMENTER, load
    from trompe_vision.segment import GRANULARITY, auto_masks

    folder = Path(tempfile.mkdtemp(prefix="trompe-vision-full-"))
    os.environ.update(build_all(folder, size="full"))
    cuda = torch.cuda.is_available()

    def sam_encoder(loaded, images):
        inputs = loaded.processor(images=images, return_tensors="pt")
        with loaded.forward():
            loaded.model.get_image_embeddings(loaded.pixels(inputs)["pixel_values"])

    work = {
        "Grounding DINO tiny": (DETECTOR, lambda m, ims: detect(m, ims, ["cat", "red car"], 0.35, 0.25)),
        "Depth Anything small": (DEPTH, predict_depth),
        "SAM ViT-B encoder": (SEGMENTER, sam_encoder),
        "SAM ViT-B auto masks (medium)": (SEGMENTER, lambda m, ims: [
            auto_masks(m, im, GRANULARITY["medium"], 0.0) for im in ims]),
    }
    rows = []
    print("\n" + MODEL_HEADER)
    for name, (spec, run) in tqdm(work.items(), desc="models", unit="model"):
        loaded = load(spec)
        for batch in batches:
            images = [photo(seed=i) for i in range(batch)]
            run(loaded, images)  # warm-up: kernels, autotuning
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                run(loaded, images)
                if cuda:
                    torch.cuda.synchronize()
                times.append(time.perf_counter() - start)
            median = statistics.median(times)
            row = {"model": name, "batch": batch, "median_s": median, "images_per_s": batch / median,
                   "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan"),
                   "device": f"{loaded.device} {str(loaded.dtype).removeprefix('torch.')}"}
            rows.append(row)
            tqdm.write(model_row(row, next(r["median_s"] for r in rows if r["model"] == name)))
    return rows


MODEL_HEADER = (f"{'model (random weights, 640x480)':<32} {'device':<16} {'batch':>5} {'median ms':>10} "
                f"{'img/s':>8} {'peak GiB':>9} {'per image vs batch 1':>21}")


def model_row(row: dict, single_s: float) -> str:
    """One table line; the last column is per-image time relative to batch 1 (below 1 = batching pays)."""
    per_image = row["median_s"] / row["batch"] / single_s
    return (f"{row['model']:<32} {row['device']:<16} {row['batch']:>5} {row['median_s'] * 1e3:>10.1f} "
            f"{row['images_per_s']:>8.2f} {row['peak_gib']:>9.2f} {per_image:>21.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=9, help="timed calls per tool (median reported)")
    parser.add_argument("--full", action="store_true", help="time the full-size models even without a GPU")
    parser.add_argument("--batches", default="1,8", help="batch sizes for the full-size models")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()

    import torch

    from trompe_vision.random_models import build_all

    os.environ["HF_HUB_OFFLINE"] = "1"
    saved_device = os.environ.get("TROMPE_VISION_DEVICE")
    os.environ["TROMPE_VISION_DEVICE"] = "cpu"
    os.environ.update(build_all(Path(tempfile.mkdtemp(prefix="trompe-vision-tiny-"))))
    figures: dict = {"tools_cpu": anyio.run(tool_latencies, args.repeat)}
    print_tool_table(figures["tools_cpu"])

    if saved_device is None:
        del os.environ["TROMPE_VISION_DEVICE"]
    else:
        os.environ["TROMPE_VISION_DEVICE"] = saved_device
    if torch.cuda.is_available() or args.full:
        batches = tuple(int(b) for b in args.batches.split(","))
        figures["models"] = model_throughput(max(3, args.repeat // 3), batches)
    else:
        print("\nno GPU: full-size timings skipped (run on a CUDA machine, or pass --full to time on CPU)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
