"""Each benchmark's numbers as a named harness computes them, looked up by the run's format.

The scorers themselves live in each benchmark's module (blink.py, blindtest.py, ...; `Benchmark.scorers`), what
they share in harness.py. `official` is the benchmark's own scorer and the default; `lmms-eval` and `vlmevalkit`
exist where those harnesses score differently; a plugin may add one to a benchmark (`register_scorers`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins

from ..records import SampleResult
from . import harness
from .benchmark import Scorer
from .benchmarks import benchmarks
from .harness import OFFICIAL, Score, plain


@hookimpl
def register_scorers(register):
    """Every registered benchmark's scorers, as a plugin's are."""
    for name, benchmark in benchmarks().items():
        for scorer, function in benchmark.scorers.items():
            register((name, scorer), function)


def registered_scorers() -> dict[str, dict[str, Scorer]]:
    """format -> scorer name (official first) -> scorer, the benchmarks' and the installed plugins'; a pair two
    plugins register is refused naming both."""
    by_format: dict[str, dict[str, Scorer]] = defaultdict(dict)
    found = default_plugins().registry("register_scorers", "scorer")
    for (fmt, name), scorer in sorted(found.items(), key=lambda item: item[0][1] != OFFICIAL):
        by_format[fmt][name] = scorer
    return dict(by_format)


def scorer_names() -> list[str]:
    """Every scorer name some format offers (`--scorer` choices), official first."""
    return list(dict.fromkeys([OFFICIAL, *(name for names in registered_scorers().values() for name in names)]))


def _render_of(fmt: str | None) -> harness.Render:
    benchmark = benchmarks().get(fmt or "")
    return benchmark.render if benchmark is not None else plain


def render(record: SampleResult, fmt: str | None) -> str | None:
    """The agent's answer written as the item's prompt asks, for a harness to read; None without an answer."""
    return harness.render(record, _render_of(fmt))


def reply(record: SampleResult, fmt: str | None) -> str | None:
    """The text a harness scores: the raw reply when the record holds one, else the rendered answer."""
    return harness.reply(record, _render_of(fmt))


def decided_by(fmt: str | None, records: Iterable[SampleResult], scorer: str = OFFICIAL) -> dict[str, str]:
    """Per record id, the rule that read its reply, where a scorer has several (`Benchmark.decided_by`: BLINK
    official: token, stated answer, named letter, option text, ...; VLMEvalKit's BLINK and V*: option letter,
    option text, ...); empty for the others."""
    benchmark = benchmarks().get(fmt or "")
    rule = benchmark.decided_by.get(scorer) if benchmark is not None else None
    if benchmark is None or rule is None:
        return {}
    return {r.id: rule(text, r) if (text := harness.reply(r, benchmark.render)) is not None else "no answer"
            for r in records if r.labelled}


def scorers_for(fmt: str | None) -> list[str]:
    """The scorer names a format offers (only `official` for sets no other harness scores)."""
    return list(registered_scorers().get(fmt or "", {OFFICIAL: None}))


def check(fmt: str | None, scorer: str) -> None:
    """A clear error naming the accepted scorers when `fmt` has no scorer of that name."""
    if scorer not in scorers_for(fmt):
        raise ValueError(f"--scorer: {fmt or 'this dataset'} offers {', '.join(scorers_for(fmt))}; got {scorer!r}")


def score(fmt: str, records: list[SampleResult], scorer: str = OFFICIAL) -> Score:
    """The named harness's numbers over labelled records of a benchmark a scorer is registered for."""
    check(fmt, scorer)
    found = registered_scorers().get(fmt)
    if found is None:  # `official` passes `check` for any set: such a set is scored per category, not here
        raise ValueError(f"{fmt}: no harness scorer is registered for this format; formats with one: "
                         f"{', '.join(sorted(registered_scorers()))}")
    return found[scorer](records)
