"""`trompe dataset info|convert`: check how a benchmark file reads before spending a run on it."""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace
from pathlib import Path

from trompe_kernel.exits import OK

from .answer_types import of_sample
from .cliargs import add_dataset_args, describe_counts
from .jsonl import write_jsonl
from .load import agent_task, dataset_formats, load_dataset
from .parquet import write_image


def register(subparsers: argparse._SubParsersAction) -> None:
    dataset = subparsers.add_parser("dataset", help="inspect or convert a benchmark dataset")
    actions = dataset.add_subparsers(dest="action", required=True, metavar="ACTION")
    info = actions.add_parser("info", help="format, split, counts, categories and options of a dataset")
    convert = actions.add_parser("convert", help="write a dataset in the generic probes.jsonl format, its images "
                                 "beside it")
    for action in (info, convert):
        action.add_argument("dataset", type=Path, help="dataset file or folder")
        action.add_argument("--format", choices=sorted(dataset_formats()), help="dataset format (default: detected)")
        action.add_argument("--labels", type=Path, help="label file joining answers to an unlabelled set")
        add_dataset_args(action)
    convert.add_argument("--out", type=Path, required=True, help="folder for probes.jsonl")
    info.set_defaults(func=run_info)
    convert.set_defaults(func=run_convert)


def _load(args: argparse.Namespace):
    return load_dataset(args.dataset, format=args.format, labels=args.labels, images_root=args.images_root,
                        split=args.split, images_anywhere=args.images_anywhere)


def run_info(args: argparse.Namespace) -> int:
    dataset = _load(args)
    samples = dataset.samples
    split = sorted({str(s.metadata.get("split")) for s in samples if s.metadata.get("split")})
    print(f"{args.dataset}: {dataset.format}" + (f", split {', '.join(split)}" if split else "")
          + f", {len(samples)} samples{describe_counts(dataset)}")
    print(f"illusion agent task: {agent_task(dataset.format, samples)}")
    kinds = Counter(kind.describe() if (kind := of_sample(s)) else "task default" for s in samples)
    print("answer types: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    options = Counter(len(s.choices) for s in samples if s.choices)
    if options:
        print("options per sample: " + ", ".join(f"{k}: {v}" for k, v in sorted(options.items())))
    answers = Counter(s.answer for s in samples if s.answer is not None)
    print("answers: " + (", ".join(f"{k} {v}" for k, v in answers.most_common(10)) or "none (unlabelled)"))
    for name, count in sorted(Counter(s.category or "-" for s in samples).items()):
        print(f"  {name}: {count}")
    return OK


def run_convert(args: argparse.Namespace) -> int:
    """probes.jsonl and the images it names, in one folder: it loads as it is, wherever it is moved (a dataset's
    images must be inside its folder, files.check_inside)."""
    dataset = _load(args)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "probes.jsonl"
    folder = args.out / "images"
    folder.mkdir(exist_ok=True)
    kept = [replace(s, images=[write_image(Path(p).read_bytes(), folder, f"{s.id}, image") for p in s.images])
            for s in dataset.samples if not s.error]  # a sample that cannot run is left out, and counted
    write_jsonl(kept, path)
    print(f"wrote {len(kept)} samples to {path}{describe_counts(dataset)}")
    return OK
