"""One sample shape for every dataset and probe set."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass
class Sample:
    """A question about one or more images, with its answer when known."""

    id: str
    images: list[Path]  # local files; the first is registered as `original`, others as image_2..image_4
    question: str
    answer: str | None = None  # normalised: 'yes'/'no', 'A'..'D', a count '2', a letter 'k', ...
    choices: list[str] | None = None  # option texts in order (A, B, ...)
    category: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # set when the sample cannot be run (e.g. its image is missing): it fails alone
    answer_type: str | None = None  # 'yesno', 'integer', 'pair', ... (answer_types.KINDS); None: from options/answer


class Dataset(Protocol):
    """Anything that yields samples in a stable order."""

    name: str

    def __iter__(self) -> Iterator[Sample]: ...


class DatasetError(ValueError):
    """A dataset file that cannot be read as its format says; the message names the file, row and field."""


@dataclass
class ListDataset:
    """A dataset already read into memory, so errors surface at load time rather than mid-run."""

    name: str
    samples: list[Sample]
    counts: dict[str, int] = field(default_factory=dict)  # e.g. unlabelled, missing_image: shown to the user
    format: str | None = None  # the loader that read it (set by load_dataset)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __len__(self) -> int:
        return len(self.samples)


@dataclass
class FileDataset:
    """A dataset read afresh from its file each time it is iterated, so a run of 100k samples never holds them
    all; built by `load_dataset(..., stream=True)` after one pass that checked every row and counted them."""

    name: str
    read: Callable[[], Iterator[Sample]]
    length: int
    counts: dict[str, int] = field(default_factory=dict)
    format: str | None = None

    def __iter__(self) -> Iterator[Sample]:
        return self.read()

    def __len__(self) -> int:
        return self.length
