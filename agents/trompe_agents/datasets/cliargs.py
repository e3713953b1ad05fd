"""The dataset options every command that loads a dataset shares (illusion-agent run, sevex, trompe dataset)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .files import OUTSIDE_FLAG
from .splits import ALL


def add_dataset_args(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument("--images-root", type=Path, metavar="DIR",
                        help="folder the dataset's image paths are relative to (HallusionBench: the folder holding "
                             "VD/ and VS/; DataCV Task II and V*: the image folder); for parquet, where embedded "
                             "images are written (default: the dataset file's folder / a cache folder)")
    parser.add_argument(OUTSIDE_FLAG, action="store_true", dest="images_anywhere",
                        help="read images wherever the dataset's paths lead (absolute paths, '..', links out of "
                             "its folder); by default an image outside the dataset's folder and --images-root is "
                             "refused, so a dataset from elsewhere cannot send any file you can read to a vendor")
    parser.add_argument("--split", metavar="NAME",
                        help=f"Hugging Face split to read (default: the labelled evaluation split: BLINK val, "
                             f"IllusionVQA test, BlindTest valid; '{ALL}' reads every split)")


def describe_counts(dataset) -> str:
    """'; 12 unlabelled (not scored), 1 missing_image' for the load summary line, or ''."""
    notes = {"unlabelled": "unlabelled (not scored)", "missing_image": "with a missing image (will fail)",
             "label_mismatch": "whose label row holds another question or image (not joined)"}
    parts = [f"{n} {notes.get(k, k)}" for k, n in sorted(dataset.counts.items()) if n]
    return "; " + ", ".join(parts) if parts else ""
