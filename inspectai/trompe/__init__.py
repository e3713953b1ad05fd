"""trompe inside Inspect AI: the benchmarks as tasks, the illusion agent as a solver, the image tools as Inspect
tools and trompe's scorers as Inspect scorers (docs/inspect.md). Needs the `inspect` extra.

The package is named `trompe` because Inspect names an extension's tasks after its top-level package:
`inspect eval trompe/datacv_task1`.
"""

__all__ = ["__version__"]


def __getattr__(name: str):
    """`trompe.__version__`: the distribution's version, from its metadata (nothing of Inspect is imported)."""
    if name == "__version__":
        from trompe_kernel.version import __version__

        return __version__
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
