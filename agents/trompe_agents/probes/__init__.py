"""Probe sets with computed ground truth: classic illusions and BlindTest-style tasks."""

from __future__ import annotations

from . import blindtest  # noqa: F401  (registers the BlindTest-style families)
from .base import FAMILIES, Family, Probe, family
from .generate import SUITES, generate, list_families

try:
    from . import illusions  # noqa: F401  (registers the illusion families)
except ModuleNotFoundError as err:  # the illusion families may be absent from a partial checkout
    if not (err.name or "").startswith(__name__ + ".illusions"):
        raise

__all__ = ["FAMILIES", "SUITES", "Family", "Probe", "family", "generate", "list_families"]
