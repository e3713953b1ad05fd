"""The installed distribution's version, read from its metadata so it is never out of step with pyproject.toml."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "trompe"


def installed_version() -> str:
    """`trompe`'s version as installed; '0+unknown' for a source tree that was never installed."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


__version__ = installed_version()
