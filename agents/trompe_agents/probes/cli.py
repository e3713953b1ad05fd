"""`trompe probes list|generate`: see and write the probe sets."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from trompe_kernel.exits import OK

from . import SUITES, generate, list_families


def register(subparsers: argparse._SubParsersAction) -> None:
    probes = subparsers.add_parser("probes", help="list or generate probe sets with computed ground truth")
    actions = probes.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser("list", help="list the probe families")
    listing.add_argument("--suite", choices=SUITES, help="only this suite")
    listing.set_defaults(func=run_list)

    gen = actions.add_parser("generate", help="write images and probes.jsonl to a folder")
    gen.add_argument("--suite", choices=SUITES, required=True)
    gen.add_argument("--families", help="comma-separated family names (default: every family of the suite)")
    gen.add_argument("--n", type=int, default=100, help="number of probes (default: 100)")
    gen.add_argument("--seed", type=int, default=0, help="same seed, same bytes (default: 0)")
    gen.add_argument("--size", type=int, default=512, help="image side in pixels (default: 512)")
    gen.add_argument("--balance", type=float, default=0.5,
                     help="share of genuine (non-counterfactual) illusion probes (default: 0.5)")
    gen.add_argument("--jpeg-quality", type=int, help="re-encode images as JPEG at this quality (1-95)")
    gen.add_argument("--out", type=Path, required=True, help="output folder")
    gen.add_argument("--quiet", action="store_true", help="no progress bar")
    gen.set_defaults(func=run_generate)


def run_list(args: argparse.Namespace) -> int:
    families = list_families(args.suite)
    width = max((len(f.name) for f in families), default=0)
    kind = max((len(f.category) for f in families), default=0)
    for f in families:
        magnitudes = ", ".join(f"{m:g}" for m in f.magnitudes)
        print(f"{f.name:<{width}}  {f.suite:<9}  {f.category:<{kind}}  {f.description}"
              + (f"  [magnitudes {magnitudes}]" if f.suite == "illusions" else ""))
    return OK


def run_generate(args: argparse.Namespace) -> int:
    families = [name.strip() for name in args.families.split(",") if name.strip()] if args.families else None
    samples = generate(args.suite, families, n=args.n, seed=args.seed, size=args.size, balance=args.balance,
                       jpeg_quality=args.jpeg_quality, out=args.out, progress=not args.quiet)
    per_family = Counter(s.metadata["family"] for s in samples)
    print(f"wrote {len(samples)} probes to {args.out / 'probes.jsonl'} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(per_family.items()))})")
    return OK
