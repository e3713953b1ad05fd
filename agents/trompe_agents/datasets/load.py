"""`load_dataset`: one entry point for every supported format, with format detection from the files."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins

from . import answer_types
from .base import DatasetError, FileDataset, ListDataset, Sample
from .blindtest import load_blindtest
from .blink import load_blink
from .datacv import load_datacv1, load_datacv2
from .files import check_inside
from .hallusionbench import load_hallusionbench
from .illusionvqa import load_illusionvqa
from .jsonl import PROBES_FILE, iter_jsonl, load_jsonl
from .labels import join_labels
from .parquet import cache_root, parquet_columns
from .splits import check_no_split
from .tet import load_tet
from .tsv import load_tsv
from .vstar import load_vstar

# The built-in formats; every format, a plugin's included, is in dataset_formats().
LOADERS: dict[str, Callable[[Path, Path | None, str | None], ListDataset]] = {
    "jsonl": load_jsonl, "datacv1": load_datacv1, "datacv2": load_datacv2, "blink": load_blink,
    "blindtest": load_blindtest, "hallusionbench": load_hallusionbench, "illusionvqa": load_illusionvqa,
    "vstar": load_vstar, "tet": load_tet, "vlmevalkit": load_tsv,
}


@hookimpl
def register_dataset_formats(register):
    """The built-in formats, registered as a plugin's are."""
    for name, loader in LOADERS.items():
        register(name, loader)


def dataset_formats() -> dict[str, Callable[[Path, Path | None, str | None], ListDataset]]:
    """name -> loader(path, images_root, split) for every format the built-ins and the installed plugins register
    (a plugin's format is read by --format NAME; detection knows the built-in ones)."""
    return dict(default_plugins().registry("register_dataset_formats", "dataset format"))


# The illusion agent's task per format: 1 yes/no, 2 multiple choice (others: from the samples).
AGENT_TASKS = {"datacv1": 1, "hallusionbench": 1, "datacv2": 2, "blink": 2, "illusionvqa": 2, "vstar": 2}


def _first_json_line(path: Path) -> set[str]:
    first = next((line for line in path.open(encoding="utf-8") if line.strip()), "{}")
    try:
        row = json.loads(first)
    except ValueError as err:
        raise DatasetError(f"{path}: first line is not valid JSON ({err})") from None
    return set(row) if isinstance(row, dict) else set()


def _json_keys(path: Path) -> set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise DatasetError(f"{path}: not valid JSON ({err})") from None
    return set(data[0]) if isinstance(data, list) and data and isinstance(data[0], dict) else set()


def detect_format(path: Path) -> str:
    """Tell the format from the file name, CSV header, JSON keys or parquet columns."""
    if path.is_dir() and (path / PROBES_FILE).is_file():
        return "jsonl"
    keys: set[str] = set()
    if path.suffix == ".jsonl":
        keys = _first_json_line(path)
        if {"image", "text", "label", "question_id"} <= keys:
            return "vstar"
        return "illusionvqa" if "images" not in keys and "image" in keys else "jsonl"
    if path.suffix == ".tsv":
        with path.open(newline="", encoding="utf-8") as f:
            keys = set(f.readline().rstrip("\r\n").split("\t"))
        if {"index", "question"} <= keys:
            return "vlmevalkit"
    elif path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as f:
            keys = set(next(csv.reader(f), []))
        if {"index", "image_path", "prompt"} <= keys:
            return "datacv1"
    elif path.suffix == ".json":
        keys = _json_keys(path)
        if {"image_name", "Question", "option"} <= keys:
            return "datacv2"
        if {"gt_answer", "visual_input"} <= keys:
            return "hallusionbench"
        if "question" in keys and ("options" in keys or "choices" in keys):
            return "illusionvqa"
    elif path.suffix == ".parquet" or path.is_dir():
        keys = set(parquet_columns(path))
        if {"gt_answer", "visual_input", "image"} <= keys:
            return "hallusionbench"
        if {"idx", "question", "groundtruth", "image"} <= keys:
            return "tet"
        if {"task", "groundtruth"} <= keys:
            return "blindtest"
        if {"idx", "choices", "image_1"} <= keys:
            return "blink"
        if {"image", "question"} <= keys and ({"options", "choices"} & keys):
            return "illusionvqa"
    found = f" (found: {', '.join(sorted(keys))})" if keys else ""
    raise DatasetError(f"dataset: cannot tell the format of {path}{found}; pass --format, one of "
                       f"{', '.join(dataset_formats())}")


def load_dataset(path: Path | str, format: str | None = None, labels: Path | str | None = None,
                 images_root: Path | str | None = None, split: str | None = None,
                 stream: bool = False, images_anywhere: bool = False) -> ListDataset | FileDataset:
    """Read a local dataset file or folder into samples.

    images_root: the folder image paths are resolved against, the way each benchmark's own code does (default:
        the dataset file's folder; HallusionBench also tries hallusion_bench/ beside its JSON); for parquet
        formats, the folder embedded images are written to (default: a cache folder for that exact file,
        reused by later loads; see `parquet.images_folder`).
    split: the Hugging Face split to read (default: the benchmark's labelled evaluation split; 'all': every
        split). Rows without an answer are kept but never scored; `counts['unlabelled']` says how many.
    labels: an optional id -> answer file joined onto the samples (see `labels.read_labels`).
    stream: a generic JSONL file without --labels comes back as a FileDataset, read again whenever iterated
        (every row is checked here all the same); other formats and label joins are read whole.
    images_anywhere: read images wherever the dataset's paths lead; by default an image resolving outside the
        dataset's folder, `images_root` and the cache of embedded images is refused (files.check_inside),
        whichever loader (a plugin's too) named it.
    """
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"dataset: file not found: {path}")
    folders = [] if images_anywhere else image_folders(path, images_root)
    if stream and labels is None and (format or detect_format(path)) == "jsonl" and \
            dataset_formats()["jsonl"] is load_jsonl:  # a plugin's own "jsonl" reads its own way
        return _streamed_jsonl(path / PROBES_FILE if path.is_dir() else path,
                               Path(images_root) if images_root is not None else None, split, folders)
    try:
        kind = format or detect_format(path)
        loaders = dataset_formats()
        if kind not in loaders:
            raise DatasetError(f"format: unknown format {kind!r}; choose one of {', '.join(loaders)}")
        if kind == "jsonl" and path.is_dir():
            path = path / PROBES_FILE
        dataset = loaders[kind](path, Path(images_root) if images_root is not None else None, split)
    except UnicodeDecodeError as err:  # e.g. a parquet file given with a text format
        raise DatasetError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start}); check --format") from None
    except (KeyError, TypeError, AttributeError) as err:  # a guessed or wrong --format meets other columns
        raise DatasetError(f"{path}: does not read as {kind} ({type(err).__name__}: {err}); check --format") from None
    if not images_anywhere:
        dataset.samples = list(check_inside(dataset.samples, folders))
    dataset = join_labels(dataset, Path(labels), kind) if labels is not None else dataset
    dataset.format = kind
    unlabelled = sum(s.answer is None for s in dataset.samples)
    if unlabelled:
        dataset.counts["unlabelled"] = unlabelled
    return dataset


def image_folders(path: Path, images_root: Path | str | None) -> list[Path]:
    """Where a dataset's images may be: its own folder (the folder given, or the file's), `images_root`, and the
    cache folder embedded images are written to by default."""
    return [path if path.is_dir() else path.parent, *([Path(images_root)] if images_root is not None else []),
            cache_root()]


def _streamed_jsonl(path: Path, images_root: Path | None, split: str | None, folders: list[Path]) -> FileDataset:
    """The generic format as a FileDataset: one checking pass now (errors at load time, as for a list), the
    samples read (and their images checked against `folders`, unless empty) again on every iteration."""
    check_no_split(split, "generic JSONL", path)

    def read() -> Iterator[Sample]:
        samples = iter_jsonl(path, images_root)
        return check_inside(samples, folders) if folders else samples

    length = unlabelled = 0
    try:
        for sample in read():
            length += 1
            unlabelled += sample.answer is None
    except UnicodeDecodeError as err:
        raise DatasetError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start}); check --format") from None
    return FileDataset(path.stem, read, length, {"unlabelled": unlabelled} if unlabelled else {}, "jsonl")


def agent_task(fmt: str, samples: Iterable) -> int:
    """The illusion agent's task for a dataset: its format's, else 1 when every item is yes/no, else 2 (options,
    counts, grids, letters: Task II's prompt and analysis tools, with each item's own answer form)."""
    if fmt in AGENT_TASKS:
        return AGENT_TASKS[fmt]
    kinds = {kind.kind for s in samples if (kind := answer_types.of_sample(s)) is not None}
    return 1 if kinds <= {"yesno"} else 2


def resolve_task(given: int | None, fmt: str, samples: Iterable, path: Path,
                 warn: Callable[[str], None] | None = None) -> int:
    """--task, or the one the dataset's format implies; a contradiction with a benchmark's format is refused
    rather than run wrong, one with the answers of a plain sample file is said through `warn` and run as given."""
    inferred = agent_task(fmt, samples)
    if given is not None and fmt in AGENT_TASKS and given != inferred:
        raise DatasetError(f"--task {given}: {path} is a {fmt} dataset, which is Task {inferred}; pass --task "
                           f"{inferred} or leave --task out")
    if given is not None and given != inferred and warn is not None:
        answers = "every answer is yes/no" if inferred == 1 else "some answers are not yes/no (options, counts, ...)"
        warn(f"--task {given}: {answers} in {path}, which is Task {inferred}'s form; running Task {given}'s prompt "
             f"and tools as asked (leave --task out for Task {inferred})")
    return given or inferred
