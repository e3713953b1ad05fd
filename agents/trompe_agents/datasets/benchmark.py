"""`Benchmark`: everything trompe knows about one benchmark, in one record a plugin registers whole.

A benchmark module (datasets/blink.py, a third-party package's one module) builds one and registers it through
the `register_benchmarks` hook (datasets/benchmarks.py collects them): how its files are read and told apart,
how its answers are read, which split is evaluated, the illusion agent's task, its harness scorers and their
model judges, the tasks SEVEX explores on it and its Inspect task. Nothing else in the house names a benchmark.
"""

from __future__ import annotations

import csv
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..records import SampleResult
from .base import DatasetError, ListDataset
from .harness import OFFICIAL, Render, Score, plain
from .parquet import parquet_columns

Loader = Callable[[Path, "Path | None", "str | None"], ListDataset]  # (path, images_root, split) -> dataset
Scorer = Callable[[list[SampleResult]], Score]  # a harness's numbers over the labelled records of a run


class Columns:
    """The column names of a dataset file, read once and only when a detector asks: a CSV/TSV header, the keys
    of the first JSON row, or a parquet file's (or snapshot folder's) schema; empty for other files."""

    def __init__(self, path: Path):
        self.path = path

    @functools.cached_property
    def names(self) -> frozenset[str]:
        path = self.path
        if path.suffix == ".jsonl":
            return _first_json_line(path)
        if path.suffix == ".tsv":
            with path.open(newline="", encoding="utf-8") as f:
                return frozenset(f.readline().rstrip("\r\n").split("\t"))
        if path.suffix == ".csv":
            with path.open(newline="", encoding="utf-8") as f:
                return frozenset(next(csv.reader(f), []))
        if path.suffix == ".json":
            return _json_keys(path)
        if path.is_dir() and next(path.rglob("*.parquet"), None) is None:
            return frozenset()  # a folder of other files (a probe set's) has no columns
        if path.suffix == ".parquet" or path.is_dir():
            return frozenset(parquet_columns(path))
        return frozenset()


def _first_json_line(path: Path) -> frozenset[str]:
    first = next((line for line in path.open(encoding="utf-8") if line.strip()), "{}")
    try:
        row = json.loads(first)
    except ValueError as err:
        raise DatasetError(f"{path}: first line is not valid JSON ({err})") from None
    return frozenset(row) if isinstance(row, dict) else frozenset()


def _json_keys(path: Path) -> frozenset[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise DatasetError(f"{path}: not valid JSON ({err})") from None
    return frozenset(data[0]) if isinstance(data, list) and data and isinstance(data[0], dict) else frozenset()


Detector = Callable[[Path, Columns], bool]  # is this file (or folder) one of the benchmark's?


@dataclass(frozen=True)
class Judge:
    """One harness's model matcher: which replies it is asked about, what it is asked, and how its verdict reads."""

    unread: Callable[[str, SampleResult], bool]  # the harness's rules read no answer in this reply
    prompt: Callable[[str, SampleResult], str]
    verdict: Callable[[str, SampleResult], str]  # the judge's text -> the reply the scorer then reads


@dataclass(frozen=True)
class SevexTask:
    """A task SEVEX explores on a benchmark: what the question asks and the answer format the prompt names."""

    name: str
    description: str
    answer_format: str
    categories: tuple[str, ...] | None = None  # the sample categories it covers (with spaces or _); None: all
    tags: tuple[str, ...] = ("core", "analysis", "vision")  # tool tags the visual prompts may use


@dataclass(frozen=True)
class Benchmark:
    """One benchmark, whole: registered once (`register_benchmarks`), read by every part of trompe.

    name: the format name (`--format NAME`, a run's `format`); aliases: other names answers.extract and SEVEX
        know it by; loader(path, images_root, split) -> ListDataset.
    detect(path, columns): whether a file is this benchmark's (detection tries lower `detection_rank` first, then
        by name: 0 for a rule no other file meets, higher for looser rules; None: never detected, --format only).
    answer_form: how a reply is read (forms.py: choice, count, rows_columns, yesno, binary, letter, word, auto),
        unless `extractor(text, choices)` reads it the benchmark's own way for every item.
    render(answer, answer_type): the agent's answer written as the item's prompt asks ("{2}", "(B)"), for a
        harness to read; yes/no answers are capitalised before.
    evaluation_split: the labelled split read when a snapshot holds several and --split is not given.
    agent_task: the illusion agent's task (1 yes/no, 2 multiple choice); None: from the samples' answers.
    scorers: harness name -> scorer (OFFICIAL first, the default); judges: harness name -> its model matcher
        (`--judge-backend`); decided_by: harness name -> rule(text, record) naming what read each reply.
    record_keys: the sample metadata a result record keeps for these scorers and judges.
    category_rule: what the per-category accuracy means, for a benchmark without harness scorers.
    sevex_tasks: the tasks `sevex explore --task NAME` knows on it.
    inspect_task: the Inspect task's name (`inspect eval trompe/NAME`); None: no task. description: its summary.
    """

    name: str
    loader: Loader
    description: str
    aliases: tuple[str, ...] = ()
    detect: Detector | None = None
    detection_rank: int = 0
    answer_form: str = "auto"
    extractor: Callable[[str, list[str] | None], str | None] | None = None
    render: Render = plain
    evaluation_split: str | None = None
    agent_task: int | None = None
    scorers: Mapping[str, Scorer] = field(default_factory=dict)
    judges: Mapping[str, Judge] = field(default_factory=dict)
    decided_by: Mapping[str, Callable[[str, SampleResult], str]] = field(default_factory=dict)
    record_keys: tuple[str, ...] = ()
    category_rule: str = "accuracy per category"
    sevex_tasks: tuple[SevexTask, ...] = ()
    inspect_task: str | None = None

    def __post_init__(self) -> None:
        if self.scorers and next(iter(self.scorers)) != OFFICIAL:
            raise ValueError(f"benchmark {self.name!r}: its first scorer must be {OFFICIAL!r} (the default)")
