"""Time to load 1,000 samples from each dataset format (median of repeats), against the generic JSONL format.

    python bench/datasets_load.py [--n 1000] [--repeat 5]

Parquet formats include writing their embedded images to a fresh folder on every run (the cold cost).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tqdm import tqdm

from trompe_agents.datasets import load_dataset
from trompe_agents.testing import dataset_files as files

WRITERS = {
    "jsonl (baseline)": lambda d, n: files.write_generic(d / "jsonl", n),
    "datacv1": lambda d, n: files.write_datacv1(d / "datacv1", n),
    "datacv2": lambda d, n: files.write_datacv2(d / "datacv2", n),
    "hallusionbench": lambda d, n: files.write_hallusionbench(d / "hb", n * 4 // 3 + 1),  # 1 in 4 has no image
    "blink (2 images)": lambda d, n: files.write_blink(d / "blink.parquet", n),
    "blindtest": lambda d, n: files.write_blindtest(d / "blindtest.parquet", n),
    "illusionvqa": lambda d, n: files.write_illusionvqa(d / "illusionvqa.parquet", n),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        medians = {}
        for label, write in tqdm(WRITERS.items(), desc="formats", unit="format"):
            path = write(root, args.n)
            times = []
            for r in range(args.repeat):
                start = time.perf_counter()
                loaded = load_dataset(path, images_root=root / f"cache-{label}-{r}" if "parquet" in path.suffix
                                      else None)
                times.append(time.perf_counter() - start)
            assert len(loaded) >= args.n, (label, len(loaded))
            medians[label] = statistics.median(times)
    base = medians["jsonl (baseline)"]
    print("\n| format | samples | median ms | ratio vs jsonl |\n|---|---:|---:|---:|")
    for label, seconds in medians.items():
        print(f"| {label} | {args.n} | {seconds * 1e3:.1f} | {seconds / base:.2f}x |")


if __name__ == "__main__":
    main()
