"""A sample's content as a short hash, so joins across files and runs pair the same item, never two that only
share an id: resume and compare (illusion/identity.py), label files (labels.py), SEVEX's dev/test split.

`sample_digest` covers what the model is shown and scored against: the image bytes, the question, the options, the
answer form it is asked for (answer_types.py: its schema and instruction line are sent) and, unless `label=False`,
the gold label. The split leaves the label out: a test copy of a dev item without its label is the same item.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from . import answer_types
from .base import Sample

Cache = dict[Path, str]


def file_sha(path: Path, cache: Cache | None = None) -> str:
    """The file's sha256 hex digest, read once per path per cache; an unreadable file names why instead."""
    cache = {} if cache is None else cache
    if path not in cache:
        try:
            with open(path, "rb") as f:  # file_digest reads into one 256 KiB buffer: no new block per read
                cache[path] = hashlib.file_digest(f, "sha256").hexdigest()
        except OSError as exc:  # the sample fails alone when run; its identity still says the image was missing
            cache[path] = f"unreadable: {os.strerror(exc.errno) if exc.errno else exc}"
    return cache[path]


def sample_digest(sample: Sample, cache: Cache | None = None, *, label: bool = True) -> str:
    """16 hex digits over the sample's images, question, options, answer form and (unless label=False) label."""
    cache = {} if cache is None else cache
    kind = answer_types.of_sample(sample)
    shown = {"question": sample.question, "choices": sample.choices, "images": [file_sha(Path(p), cache)
                                                                                for p in sample.images]}
    if kind is not None:  # None: the task's yes/no or A-D form decides, and the task is in the fingerprint
        shown["answer_type"] = kind.describe()
    if label:
        shown["label"] = sample.answer
    return hashlib.sha256(json.dumps(shown, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def sample_digests(samples: Iterable[Sample], *, label: bool = True) -> dict[str, str]:
    """id -> content hash for every sample, each image file read once."""
    cache: Cache = {}
    return {s.id: sample_digest(s, cache, label=label) for s in samples}
