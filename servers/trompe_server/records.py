"""An image's identity and lineage, the same whichever storage holds it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ImageRecord:
    """One image's identity and lineage: how it was made and from what."""

    id: str
    width: int
    height: int
    mode: str
    operation: str
    arguments: dict[str, Any]
    parents: tuple[str, ...]
    created: float

    @property
    def nbytes(self) -> int:
        return self.width * self.height * len(self.mode)

    def describe(self) -> dict[str, Any]:
        return asdict(self) | {"parents": list(self.parents)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImageRecord:
        """The inverse of describe(), for storages that keep records as JSON."""
        return cls(**data | {"parents": tuple(data["parents"])})
