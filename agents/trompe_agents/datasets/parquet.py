"""Reading Hugging Face parquet exports: rows as dicts, image structs written out as files."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import DatasetError
from .files import require_columns
from .splits import pick_split

IMAGE_MAGIC = {b"\x89PNG": ".png", b"\xff\xd8\xff": ".jpg", b"GIF8": ".gif", b"RIFF": ".webp", b"BM": ".bmp"}


def pyarrow_parquet():
    """pyarrow.parquet, imported only when a parquet dataset is read."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetError("reading parquet datasets needs pyarrow: pip install 'trompe[data]'") from None
    return pq


def parquet_files(path: Path) -> list[Path]:
    """The file itself, or every .parquet file under a folder (a Hugging Face snapshot), in name order."""
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        if not files:
            raise DatasetError(f"{path}: no .parquet files in this folder")
        return files
    if not path.is_file():
        raise DatasetError(f"dataset: file not found: {path}")
    return [path]


def parquet_columns(path: Path) -> list[str]:
    """Column names of the first parquet file, read from its schema only."""
    first = parquet_files(path)[0]
    try:
        return list(pyarrow_parquet().read_schema(first).names)
    except Exception as err:
        raise DatasetError(f"{first}: not a readable parquet file ({err})") from None


ROWS_PER_BATCH = 64  # rows decoded into Python at a time: a dataset's images are never all in memory at once


def read_rows(path: Path, need: list[str], split: str | None = None, evaluation: str | None = None
              ) -> tuple[Iterator[tuple[str, dict[str, Any]]], str | None]:
    """Rows of the chosen split's parquet files (`split`, else `evaluation`, the benchmark's evaluation split),
    each with a 'file: row N' label for error messages, read a batch at a time as they are iterated (a file that
    is not parquet, or lacks a column, fails when its turn comes)."""
    pq = pyarrow_parquet()
    files, chosen = pick_split(parquet_files(path), split, evaluation, path)
    return _rows(pq, files, need), chosen


def _rows(pq: Any, files: list[Path], need: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    for file in files:
        try:
            reader = pq.ParquetFile(file)
            require_columns(reader.schema_arrow.names, need, str(file))
            n = 0
            for batch in reader.iter_batches(batch_size=ROWS_PER_BATCH):
                for row in batch.to_pylist():
                    yield f"{file}: row {n}", row
                    n += 1
        except DatasetError:
            raise
        except Exception as err:  # pyarrow raises several types for a file that is not parquet or is damaged
            raise DatasetError(f"{file}: not a readable parquet file ({err})") from None


def cache_root() -> Path:
    """The folder default image folders live under: ~/.cache/trompe (XDG_CACHE_HOME honoured)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "trompe"


def images_folder(images_root: Path | None, name: str, source: Path) -> Path:
    """Where embedded images are written: the caller's folder, or a cache folder tied to this exact file.

    The default, <cache_root>/NAME/<digest of the file's path, size and mtime>, is reused by later loads of the
    same file instead of filling the temp folder each time.
    """
    if images_root is None:
        stat = source.stat()
        key = hashlib.sha256(f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
        images_root = cache_root() / name / f"{safe_name(source.stem)}-{key}"
    images_root.mkdir(parents=True, exist_ok=True)
    return images_root.resolve()


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "image"


def write_image(value: Any, folder: Path, where: str) -> Path:
    """Write a Hugging Face image struct ({'bytes', 'path'}) or raw bytes to folder/<digest of the bytes>.<ext>.

    Named by content, not by the row's id: two ids that read alike once made safe for a file name ('cat dog',
    'cat_dog', 'cat/dog') would otherwise share one file, and one sample be asked about another's image."""
    data = value.get("bytes") if isinstance(value, dict) else value
    if not data:
        raise DatasetError(f"{where}: image is missing (no bytes)")
    ext = next((e for magic, e in IMAGE_MAGIC.items() if data.startswith(magic)), None)
    if ext is None and isinstance(value, dict) and value.get("path"):
        ext = Path(value["path"]).suffix or None
    path = folder / f"{hashlib.sha256(data).hexdigest()[:32]}{safe_name(ext or '.img')}"
    if not path.is_file() or path.stat().st_size != len(data):
        temp = folder / f".{path.name}.{os.getpid()}.tmp"  # renamed whole: a load beside this one reads old or new
        temp.write_bytes(data)
        os.replace(temp, path)
    return path
