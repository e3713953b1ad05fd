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

# label -> writer(folder, n) returning (dataset path, --images-root or None); None for parquet means a fresh
# cache folder per repeat (the cold cost of writing embedded images).
WRITERS = {
    "jsonl (baseline)": lambda d, n: (files.write_generic(d / "jsonl", n), None),
    "datacv1": lambda d, n: (files.write_datacv1(d / "datacv1", n, answers=True), None),
    "datacv2": lambda d, n: (files.write_datacv2(d / "datacv2", n, answers=True), d / "datacv2" / "images"),
    "hallusionbench": lambda d, n: (files.write_hallusionbench(d / "hb", n), None),
    "vstar": lambda d, n: (files.write_vstar(d / "vstar", n), d / "vstar" / "V_star bench"),
    "blink (2 images)": lambda d, n: (files.write_blink(d / "blink.parquet", n), None),
    "blindtest": lambda d, n: (files.write_blindtest(d / "blindtest.parquet", n), None),
    "illusionvqa": lambda d, n: (files.write_illusionvqa(d / "illusionvqa.parquet", n), None),
    "tet": lambda d, n: (files.write_tet(d / "tet.parquet", n), None),
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
            path, images_root = write(root, args.n)
            times = []
            for r in range(args.repeat):
                start = time.perf_counter()
                cache = root / f"cache-{label}-{r}" if path.suffix == ".parquet" else images_root
                loaded = load_dataset(path, images_root=cache)
                times.append(time.perf_counter() - start)
            assert len(loaded) >= args.n and "missing_image" not in loaded.counts, (label, loaded.counts)
            medians[label] = statistics.median(times)
    base = medians["jsonl (baseline)"]
    print("\n| format | samples | median ms | ratio vs jsonl |\n|---|---:|---:|---:|")
    for label, seconds in medians.items():
        print(f"| {label} | {args.n} | {seconds * 1e3:.1f} | {seconds / base:.2f}x |")


if __name__ == "__main__":
    main()
