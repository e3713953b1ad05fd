"""What a batch run is told: where it writes, how hard it pushes the backend, what it may resume across."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .identity import CHANGEABLE
from .pricing import Price, standard_prices


@dataclass
class RunOptions:
    """Where a run reads from and writes to, and how hard it pushes the backend."""

    out: Path
    concurrency: int = 4
    limit: int | None = None
    rate_limit: float | None = None  # requests per minute, per backend
    retry_errors: bool = False
    prices: dict[str, Price] = field(default_factory=lambda: dict(standard_prices()))
    progress: bool = True
    meta: dict[str, Any] = field(default_factory=dict)  # command, dataset, ... recorded in run.json
    settings: dict[str, Any] = field(default_factory=dict)  # backend settings that decide answers (identity.py)
    allow_change: tuple[str, ...] = ()  # fingerprint fields a resume may continue across (identity.CHANGEABLE)

    def __post_init__(self):
        unknown = sorted(set(self.allow_change) - set(CHANGEABLE))
        if unknown:
            raise ValueError(f"allow-change: {', '.join(unknown)} cannot change within a run; accepted: "
                             f"{', '.join(CHANGEABLE)}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}")
        if self.rate_limit is not None and self.rate_limit <= 0:
            raise ValueError(f"rate limit must be > 0 requests per minute, got {self.rate_limit:g}")
