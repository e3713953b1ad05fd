"""`load_dataset`: one entry point for every supported format, with format detection from the files."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins

from . import answer_types, jsonl
from .base import DatasetError, FileDataset, ListDataset, Sample
from .benchmark import Columns, Loader
from .benchmarks import benchmarks, detection_order
from .files import check_inside
from .jsonl import iter_jsonl, lines_file, load_jsonl
from .labels import join_labels
from .parquet import cache_root
from .splits import check_no_split


@hookimpl
def register_dataset_formats(register):
    """Every registered benchmark's loader, as a plugin's format is."""
    for name, benchmark in benchmarks().items():
        register(name, benchmark.loader)


def dataset_formats() -> dict[str, Loader]:
    """name -> loader(path, images_root, split) for every benchmark and every format the installed plugins
    register (a plugin's format is read by --format NAME; detection knows the benchmarks')."""
    return dict(default_plugins().registry("register_dataset_formats", "dataset format"))


def detect_format(path: Path) -> str:
    """Tell the format from the file name, CSV header, JSON keys or parquet columns (`Benchmark.detect`)."""
    columns = Columns(path)
    for benchmark in detection_order():
        if benchmark.detect(path, columns):
            return benchmark.name
    keys = columns.names
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
    if stream and labels is None and dataset_formats().get(format or detect_format(path)) is load_jsonl:
        return _streamed_jsonl(lines_file(path), Path(images_root) if images_root is not None else None, split,
                               folders)
    try:
        kind = format or detect_format(path)
        loaders = dataset_formats()
        if kind not in loaders:
            raise DatasetError(f"format: unknown format {kind!r}; choose one of {', '.join(loaders)}")
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
    return FileDataset(path.stem, read, length, {"unlabelled": unlabelled} if unlabelled else {}, jsonl.NAME)


def _fixed_task(fmt: str) -> int | None:
    benchmark = benchmarks().get(fmt)
    return benchmark.agent_task if benchmark is not None else None


def agent_task(fmt: str, samples: Iterable) -> int:
    """The illusion agent's task for a dataset: its benchmark's, else 1 when every item is yes/no, else 2
    (options, counts, grids, letters: Task II's prompt and analysis tools, with each item's own answer form)."""
    if (fixed := _fixed_task(fmt)) is not None:
        return fixed
    kinds = {kind.kind for s in samples if (kind := answer_types.of_sample(s)) is not None}
    return 1 if kinds <= {"yesno"} else 2


def resolve_task(given: int | None, fmt: str, samples: Iterable, path: Path,
                 warn: Callable[[str], None] | None = None) -> int:
    """--task, or the one the dataset's format implies; a contradiction with a benchmark's format is refused
    rather than run wrong, one with the answers of a plain sample file is said through `warn` and run as given."""
    inferred = agent_task(fmt, samples)
    if given is not None and _fixed_task(fmt) is not None and given != inferred:
        raise DatasetError(f"--task {given}: {path} is a {fmt} dataset, which is Task {inferred}; pass --task "
                           f"{inferred} or leave --task out")
    if given is not None and given != inferred and warn is not None:
        answers = "every answer is yes/no" if inferred == 1 else "some answers are not yes/no (options, counts, ...)"
        warn(f"--task {given}: {answers} in {path}, which is Task {inferred}'s form; running Task {given}'s prompt "
             f"and tools as asked (leave --task out for Task {inferred})")
    return given or inferred
