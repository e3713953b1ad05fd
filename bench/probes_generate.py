"""Probes generated per second per family on one core (median per-probe time), against a simple baseline family.

    python bench/probes_generate.py [--suite blindtest|illusions] [--size 512] [--repeat 15]

"draw" is the family's make() alone; "draw + PNG" adds the lossless encode that `trompe probes generate` writes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from tqdm import tqdm

from trompe_agents.probes import list_families
from trompe_agents.probes.generate import encode

BASELINE = "nested_squares"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=["blindtest", "illusions"])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):  # one core
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rows = {}
    families = list_families(args.suite)
    for fam in tqdm(families, desc="families", unit="family"):
        draw, full = [], []
        for i in range(args.repeat):
            start = time.perf_counter()
            probe = fam.make(np.random.default_rng([0, i]), args.size, fam.suite == "illusions" and i % 2 == 1,
                             fam.magnitudes[i % len(fam.magnitudes)])
            drawn = time.perf_counter()
            encode(probe.image, None)
            draw.append(drawn - start)
            full.append(time.perf_counter() - start)
        rows[fam.name] = (fam.suite, statistics.median(draw), statistics.median(full))
    base = rows[BASELINE][2] if BASELINE in rows else min(r[2] for r in rows.values())
    print(f"\n{args.size}px, one core, median of {args.repeat}\n")
    print("| family | suite | draw ms | draw + PNG ms | probes/s | ratio vs baseline |\n|---|---|---:|---:|---:|---:|")
    for name, (suite, draw_s, full_s) in rows.items():
        label = f"{name} (baseline)" if name == BASELINE else name
        print(f"| {label} | {suite} | {draw_s * 1e3:.1f} | {full_s * 1e3:.1f} | {1 / full_s:.0f} "
              f"| {full_s / base:.2f}x |")


if __name__ == "__main__":
    main()
