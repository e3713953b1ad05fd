"""A scripted 'model' for the function backend that fails one chosen sample with a chosen ErrorKind.

The exception carries `kind` as a vendor's BackendError does, so the agent records it through
failures.failure_kind exactly as it records a real failure of that kind.
"""

from __future__ import annotations

import os

PLANTED_IN = "purple lines"  # one probe's question (seed 3 of the shared probe_dir fixture)


class PlantedFailure(Exception):
    """A failure of the kind named in TROMPE_TEST_PLANTED_KIND."""

    def __init__(self, kind: str):
        super().__init__(f"planted failure of kind {kind}")
        self.kind = kind


def yes_but_one_fails(messages, tools):
    """Answers yes at once (Task I); the sample asking about PLANTED_IN fails with the planted kind."""
    if any(PLANTED_IN in m.text for m in messages if m.role == "user"):
        raise PlantedFailure(os.environ["TROMPE_TEST_PLANTED_KIND"])
    return {"reasons": "they look the same", "answer": "yes"}


def every_sample_fails(messages, tools):
    """Every sample fails with the planted kind, as a run on a bad key or a spent account does."""
    raise PlantedFailure(os.environ["TROMPE_TEST_PLANTED_KIND"])
