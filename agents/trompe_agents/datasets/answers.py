"""Read a model's answer the way a benchmark scores it: by a registered benchmark's name, or by an answer form.

A benchmark reads its replies in its `answer_form` (forms.py), or with its own `extractor` for every item (BLINK
reads free text as its official pipeline does, so SEVEX, Inspect and the official scorer agree on every reply).
"""

from __future__ import annotations

from . import forms
from .benchmark import Benchmark
from .benchmarks import benchmarks, find
from .forms import same_answer


def _named(benchmark_or_form: str) -> Benchmark | None:
    """The registered benchmark of that name; None for an answer form; a clear error for neither."""
    found = find(benchmark_or_form)
    if found is None and forms.canonical(benchmark_or_form) is None:
        raise ValueError(f"benchmark_or_format: unknown {benchmark_or_form!r}; choose one of "
                         f"{', '.join([*benchmarks(), *forms.FORMS])}")
    return found


def extract(benchmark_or_form: str, text: str, expected: str | None = None,
            choices: list[str] | None = None) -> str | None:
    """The answer in a model's text, normalised; None if there is none (`expected`, a gold answer, picks `auto`'s
    form; `choices`, the sample's options, makes a one-letter gold answer an option letter)."""
    bench = _named(benchmark_or_form)
    if bench is not None and bench.extractor is not None:
        return bench.extractor(text, choices)
    return forms.extract(bench.answer_form if bench else benchmark_or_form, text, expected, choices)


def normalise(benchmark_or_form: str, answer: str | int, choices: list[str] | None = None) -> str:
    """A gold answer in canonical form: yes/no, 'A'..'H', '3', '5,6', a letter (case kept), a lowercase word."""
    bench = _named(benchmark_or_form)
    return forms.normalise(bench.answer_form if bench else benchmark_or_form, answer, choices, benchmark_or_form)


def states_answer(benchmark_or_form: str, text: str, answer: str, choices: list[str] | None = None) -> bool:
    """Does the model's free text, read as the benchmark (or in the answer form) reads it, state the gold answer?"""
    gold = normalise(benchmark_or_form, answer, choices)
    return same_answer(extract(benchmark_or_form, text, expected=gold, choices=choices), gold)
