"""Write a probe set to disk: images plus `probes.jsonl`, reproducible byte for byte from a seed."""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image
from tqdm import tqdm

from ..datasets.base import Sample
from ..datasets.jsonl import PROBES_FILE, write_jsonl
from .base import Family, registered_families

SUITES = ("illusions", "blindtest")


def list_families(suite: str | None = None) -> list[Family]:
    """Registered families, by suite then name."""
    if suite is not None and suite not in SUITES:
        raise ValueError(f"suite: unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    return sorted((f for f in registered_families().values() if suite in (None, f.suite)),
                  key=lambda f: (f.suite, f.name))


def choose_families(suite: str, families: Sequence[str] | None = None) -> list[Family]:
    """The families to cycle through: all of the suite's, or the named ones (each must be in the suite)."""
    known = list_families(suite)
    if not known:
        raise ValueError(f"suite: no probe families are registered for {suite!r}")
    if not families:
        return known
    by_name = {f.name: f for f in known}
    unknown = [name for name in families if name not in by_name]
    if unknown:
        raise ValueError(f"families: unknown {suite} families {', '.join(unknown)}; "
                         f"known: {', '.join(by_name)}")
    return [by_name[name] for name in families]


def is_counterfactual(k: int, balance: float) -> bool:
    """The k-th sample of a family is counterfactual so that a share `1 - balance` of every prefix is."""
    share = 1.0 - balance
    return math.floor((k + 1) * share + 1e-9) > math.floor(k * share + 1e-9)


def encode(im: Image.Image, jpeg_quality: int | None) -> tuple[bytes, str]:
    """Lossless PNG, or JPEG at the chosen quality (compression artefacts are a failure source to probe)."""
    buf = io.BytesIO()
    if jpeg_quality is None:
        im.save(buf, format="PNG")
        return buf.getvalue(), ".png"
    im.convert("RGB").save(buf, format="JPEG", quality=jpeg_quality)
    return buf.getvalue(), ".jpg"


def _plain(value):
    """Numpy scalars and arrays in params become plain JSON values (json.dumps's `default`)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} to probes.jsonl")


def probe_id(suite: str, seed: int, index: int, family: str, data: bytes) -> str:
    """'illusions-s7-00003-cafe_wall-1a2b3c4d': suite, seed, index, family and a hash of the image bytes, so two
    sets drawn with another seed, size or JPEG quality never share an id (joins across runs match on it)."""
    return f"{suite}-s{seed}-{index:05d}-{family}-{hashlib.sha256(data).hexdigest()[:8]}"


def generate(suite: str, families: Sequence[str] | None = None, n: int = 100, seed: int = 0, size: int = 512,
             balance: float = 0.5, jpeg_quality: int | None = None, out: Path | str = "probes",
             progress: bool = True) -> list[Sample]:
    """Render `n` probes round-robin over the chosen families into `out` (images/ and probes.jsonl).

    Sample i draws only from a generator seeded with (seed, i), so a seed gives identical bytes (and ids).
    `balance` is the share of genuine (non-counterfactual) samples per illusion family; BlindTest-style
    tasks have no counterfactual. Magnitudes cycle over the family's graded magnitudes, separately for
    genuine and counterfactual samples.
    """
    chosen = choose_families(suite, families)
    if n < 1:
        raise ValueError(f"n: must be at least 1, got {n}")
    if not 64 <= size <= 4096:
        raise ValueError(f"size: must be between 64 and 4096 pixels, got {size}")
    if not 0.0 <= balance <= 1.0:
        raise ValueError(f"balance: must be between 0 and 1 (share of genuine samples), got {balance}")
    if jpeg_quality is not None and not 1 <= jpeg_quality <= 95:
        raise ValueError(f"jpeg_quality: must be between 1 and 95, got {jpeg_quality}")
    out = Path(out).resolve()
    if out.exists() and not out.is_dir():
        raise ValueError(f"out: {out} is a file; give a folder for images/ and probes.jsonl")
    (out / "images").mkdir(parents=True, exist_ok=True)
    seen: Counter[tuple[str, bool]] = Counter()
    samples = []
    for i in tqdm(range(n), desc=f"{suite} probes", unit="probe", disable=not progress):
        fam = chosen[i % len(chosen)]
        counterfactual = fam.suite == "illusions" and is_counterfactual(i // len(chosen), balance)
        magnitude = fam.magnitudes[seen[fam.name, counterfactual] % len(fam.magnitudes)]
        seen[fam.name, counterfactual] += 1
        probe = fam.make(np.random.default_rng([seed, i]), size, counterfactual, magnitude)
        data, ext = encode(probe.image, jpeg_quality)
        sample_id = probe_id(suite, seed, i, fam.name, data)
        image = out / "images" / f"{sample_id}{ext}"
        image.write_bytes(data)
        metadata = {"family": probe.family, "suite": fam.suite, "counterfactual": probe.counterfactual,
                    "magnitude": probe.magnitude, "magnitude_unit": fam.unit or None, "seed": seed, "index": i,
                    "size": size, "jpeg_quality": jpeg_quality, "params": probe.params}
        samples.append(Sample(id=sample_id, images=[image], question=probe.question, answer=probe.answer,
                              choices=probe.choices, category=probe.category,
                              metadata=json.loads(json.dumps(metadata, default=_plain))))
    write_jsonl(samples, out / PROBES_FILE)
    return samples
