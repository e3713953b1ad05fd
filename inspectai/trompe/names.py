"""Registry names under the `trompe/` namespace however trompe was installed.

Inspect prefixes an extension's names with its top-level package when it can tell the package is installed; it
cannot when a stale `trompe.egg-info` (setuptools' build metadata) sits in the working directory and shadows the
installed distribution. Then the name is given with its namespace, so `trompe/datacv_task1` always resolves.
"""

from __future__ import annotations

from inspect_ai._util.registry import registry_name

NAMESPACE = "trompe"


def registered(name: str) -> str:
    """The name to pass to @task/@solver/@scorer/@metric so that it registers as `trompe/<name>`."""
    return name if registry_name(registered, name) == f"{NAMESPACE}/{name}" else f"{NAMESPACE}/{name}"
