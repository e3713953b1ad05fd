"""Scripted 'models' for the function backend: fixed answers, so a run's scoring is known in advance."""

from __future__ import annotations


def always_b(messages, tools):
    """Task II: answer option B at once."""
    return {"reasons": "the second option matches what is drawn", "answer": "B"}


def always_yes(messages, tools):
    """Task I: answer yes at once."""
    return {"reasons": "they look the same", "answer": "yes"}
