"""Every benchmark trompe knows: the built-ins and the installed plugins', registered through `register_benchmarks`.

A benchmark's loader becomes a dataset format (load.dataset_formats) and its scorers the `--scorer` choices of its
runs (scorers.registered_scorers), both registered as the built-in plugins `datasets` and `scorers`, so a name a
plugin's format or scorer takes too is refused naming both.
"""

from __future__ import annotations

from trompe_kernel.hookspecs import hookimpl
from trompe_kernel.manager import default_plugins

from . import blindtest, blink, datacv, hallusionbench, illusionvqa, jsonl, tet, tsv, vstar
from .benchmark import Benchmark

BUILT_IN = (blindtest.BENCHMARK, blink.BENCHMARK, datacv.TASK_I, datacv.TASK_II, hallusionbench.BENCHMARK,
            illusionvqa.BENCHMARK, jsonl.BENCHMARK, tet.BENCHMARK, tsv.BENCHMARK, vstar.BENCHMARK)


@hookimpl
def register_benchmarks(register):
    """The built-in benchmarks, registered as a plugin's are."""
    for benchmark in BUILT_IN:
        register(benchmark.name, benchmark)


def benchmarks() -> dict[str, Benchmark]:
    """name -> Benchmark for the built-ins and every installed plugin's; a name two plugins register is refused
    naming both, one registered under another name than its own is refused naming it."""
    found = dict(default_plugins().registry("register_benchmarks", "benchmark"))
    for name, benchmark in found.items():
        if not isinstance(benchmark, Benchmark) or benchmark.name != name:
            raise ValueError(f"register_benchmarks: {name!r} must be registered as register(b.name, b) with b a "
                             f"datasets.benchmark.Benchmark; got {benchmark!r}")
    return found


def find(name: str) -> Benchmark | None:
    """The benchmark registered under `name` or known by it (`Benchmark.aliases`), without case; None if none."""
    name = name.lower()
    found = benchmarks()
    return found.get(name) or next((b for b in found.values() if name in b.aliases), None)


def detection_order() -> list[Benchmark]:
    """The benchmarks that detect their files, the strictest rules first (`Benchmark.detection_rank`), then by name."""
    return sorted((b for b in benchmarks().values() if b.detect is not None),
                  key=lambda b: (b.detection_rank, b.name))
