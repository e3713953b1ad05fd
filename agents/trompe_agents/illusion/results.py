"""A run folder's results.jsonl and traces/: one flushed line per finished sample, read back latest-first per id."""

from __future__ import annotations

import json
import os
import re
from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from pathlib import Path

from ..records import SampleResult
from ..runfolder import RunFolder
from ..statefiles import cut_torn_tail
from ..trace import SAFE_NAME

RESULTS = "results.jsonl"
TRACES = "traces"


def read_results(run_dir: Path) -> dict[str, SampleResult]:
    """Latest record per sample id; a line cut short by a kill is ignored (it was never finished)."""
    records: dict[str, SampleResult] = {}
    for record in _lines(Path(run_dir) / RESULTS):
        records[record.id] = record
    return records


def _lines(path: Path, upto: int | None = None) -> Iterator[SampleResult]:
    """Every whole record of a results file in order (within its first `upto` bytes), one line in memory at a
    time."""
    folder = RunFolder(path.parent)
    if not folder.exists(path.name):
        return
    read = 0
    with os.fdopen(folder.open(path.name, os.O_RDONLY), "rb") as f:  # never a link: results are the run's own
        for line in f:
            read += len(line)
            if upto is not None and read > upto:
                return
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                yield SampleResult.from_json(data)


def latest_results(run_dir: Path, upto: int | None = None) -> Iterator[SampleResult]:
    """The latest record per sample id, as `read_results` has them, streamed in two passes over the file so that
    only each id's line number is held, not the records (a batch of 100k samples is read in flat memory)."""
    path = Path(run_dir) / RESULTS
    last = {record.id: n for n, record in enumerate(_lines(path, upto))}
    for n, record in enumerate(_lines(path, upto)):
        if last.get(record.id) == n:
            yield record


class FolderResults(Mapping[str, SampleResult]):
    """A run folder's latest record per id as results.jsonl stood at its first `upto` bytes (the file only grows:
    what a run returns is the folder as that run left it), read whenever asked and never held whole, so a run's
    summary is a streaming pass over the file rather than every record kept to the end."""

    def __init__(self, run_dir: Path, upto: int | None = None):
        self.run_dir, self.upto = Path(run_dir), upto

    def __getitem__(self, sample_id: str) -> SampleResult:
        found = None
        for record in _lines(self.run_dir / RESULTS, self.upto):
            if record.id == sample_id:
                found = record
        if found is None:
            raise KeyError(sample_id)
        return found

    def __iter__(self) -> Iterator[str]:
        return (record.id for record in latest_results(self.run_dir, self.upto))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def values(self) -> ValuesView[SampleResult]:
        return _StreamedValues(self)

    def items(self) -> ItemsView[str, SampleResult]:
        return _StreamedItems(self)

    def _records(self) -> Iterator[SampleResult]:
        return latest_results(self.run_dir, self.upto)


class _StreamedValues(ValuesView):
    """values() in one pass over the file, not one scan per key."""

    def __iter__(self) -> Iterator[SampleResult]:
        return self._mapping._records()


class _StreamedItems(ItemsView):
    """items() in one pass over the file, not one scan per key."""

    def __iter__(self) -> Iterator[tuple[str, SampleResult]]:
        return ((record.id, record) for record in self._mapping._records())


def repair_tail(path: Path) -> None:
    """Cut a partial last line (the process died mid-write) so the next append starts on a fresh line."""
    cut_torn_tail(path)


def trace_name(sample_id: str) -> str:
    """Where a sample's trace lives in its run folder, relative to it (its id made safe as a folder name)."""
    return f"{TRACES}/{SAFE_NAME.sub('_', sample_id)}"



def first_error(error: str | None) -> str:
    """A record's first error line (`error`: its errors joined per agent) without the exception class and agent
    prefixes."""
    text = re.split(r"; (?=(?:main|rescue): )", error or "")[0]  # errors joined per agent
    for prefix in ("main: ", "rescue: ", "BackendError: ", "QuotaExhausted: "):
        text = text.removeprefix(prefix)
    return text
