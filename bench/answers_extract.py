"""Answer extraction: time per reply and replies read right, the tiered extractor against one-regex readers.

    python bench/answers_extract.py [--passes 200] [--repeat 5]

The replies are the tables of tests/datasets/test_extract_table.py. The baseline reads the last "(X)", the
last yes/no or the last number, the one-pattern reading a quick script would use.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "datasets"))

from test_extract_table import CHOICE, NUMBER, YESNO  # noqa: E402

from trompe_agents.datasets.answers import extract  # noqa: E402


def _last(pattern: str, flags: int = 0):
    def read(text: str) -> str | None:
        found = re.findall(pattern, text, flags)
        return found[-1].upper() if found else None
    return read


BASELINES = {"choice": _last(r"\(([A-H])\)"), "yesno": lambda t: (_last(r"\b(yes|no)\b", re.I)(t) or "").lower()
             or None, "count": _last(r"\b(\d+)\b")}
TABLES = {"choice": CHOICE, "yesno": YESNO, "count": NUMBER}


def per_reply(read, table, passes: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(passes):
            for reply, _expected in table:
                read(reply)
        times.append((time.perf_counter() - start) / (passes * len(table)) * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| answer type | replies | one regex µs | extractor µs | ratio | one regex right | extractor right |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind, table in TABLES.items():
        ours = lambda text, kind=kind: extract(kind, text)  # noqa: E731
        base_t, ours_t = (per_reply(r, table, args.passes, args.repeat) for r in (BASELINES[kind], ours))
        base_ok, ours_ok = (sum(r(t) == e for t, e in table) for r in (BASELINES[kind], ours))
        print(f"| {kind} | {len(table)} | {base_t:.1f} | {ours_t:.1f} | {ours_t / base_t:.2f}x | "
              f"{base_ok}/{len(table)} | {ours_ok}/{len(table)} |")


if __name__ == "__main__":
    main()
