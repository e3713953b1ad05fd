"""What makes a run one experiment: a fingerprint of everything that decides its answers, and each sample's content.

A resume compares the recorded fingerprint with the new command's field by field and refuses a difference, so a
folder never mixes models, settings or datasets. Every results line carries its sample's content hash and the
run's key (the fingerprint without the dataset), so joins across runs pair the same question about the same
images, never two samples that only share an id.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trompe_kernel.version import __version__

from ..backends.base import BackendError, BackendOptions
from ..backends.settings import SettingError
from ..datasets import answer_types
from ..datasets.base import Sample
from ..messages import ToolSchema
from ..plugins import backend_settings
from ..records import SampleResult

# how `correctness.matches_label` marks each record's `correct` against the label, whatever the item's answer type; bump
# the version when that rule changes (a report's --scorer re-scores from the records and is named in its summary)
SCORERS = {1: "case-insensitive exact match; labels 1/0 and true/false read as yes/no for yes/no items v2",
           2: "case-insensitive exact match; parentheses around the label dropped; 1/0 as yes/no for yes/no items v2"}
ANSWERS = {1: "yes/no", 2: "A-D"}  # the task's form, for items whose own answer type says nothing
# fields a resume may continue across when named with --allow-change, and why that is harmless
CHANGEABLE = {
    "dataset": "another --limit of the same sample list; the samples already answered must be unchanged",
    "trompe": "another trompe version; answers already recorded keep the version they were made with",
}
RUN_KEY_EXCLUDES = ("dataset", "trompe")  # what may change inside one run without making its answers another's


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def answer_settings(options: BackendOptions) -> dict[str, Any]:
    """The backend settings that change what is sent or which model answers (not keys, URLs, retries or logs);
    `options`: the backend's own settings that differ from its defaults, as parsed (0.3, never the text '0.3')."""
    own = options.settings.changed() if options.settings is not None else {}
    return {"fallback_models": list(options.fallback_models), "options": dict(sorted(own.items())),
            "thinking": options.thinking, "image_format": options.image_format, "keep_images": options.keep_images}


def as_today(fields: dict[str, Any]) -> dict[str, Any]:
    """A recorded fingerprint with its backend settings read as this version reads them: an older run.json kept
    the values as typed (`temperature: 0` for 0.0, `prompt_cache: true` for the default). A setting the backend
    no longer takes is left as recorded, so the resume's refusal names it."""
    options = (fields.get("settings") or {}).get("options")
    if not options or not isinstance(options, dict) or "backend" not in fields:
        return fields
    try:
        own = backend_settings(fields["backend"], options).changed()
    except (BackendError, SettingError):
        return fields
    return {**fields, "settings": {**fields["settings"], "options": json.loads(json.dumps(dict(sorted(own.items())),
                                                                                        default=str))}}


def continued(recorded: dict[str, Any], identity: dict[str, Any]) -> dict[str, Any]:
    """The fingerprint a resume writes: the recorded value of every field this command leaves as it was, so the run
    keeps its key (its records stay one run) where this version writes an equal value another way (0 as 0.0)."""
    today = as_today(recorded)
    return {k: recorded[k] if k in recorded and today[k] == v else v for k, v in identity.items()}


def tools_offered(schemas: Sequence[ToolSchema]) -> dict[str, Any]:
    """The tool names the model is offered and a hash of their descriptions and schemas (a reworded tool counts)."""
    shown = sorted(([s.name, s.description, s.parameters] for s in schemas), key=lambda t: t[0])
    return {"names": [t[0] for t in shown], "sha256": _sha(json.dumps(shown, sort_keys=True, default=str))[:16]}


def answer_kind(sample: Sample) -> str:
    """The item's answer form (answer_types.py); `task`: the task's yes/no or A-D decides."""
    return kind.describe() if (kind := answer_types.of_sample(sample)) else "task"


def fingerprint(order: Sequence[str], digests: dict[str, str], *, task: int, format: str | None, backend: str,
                model: str | None, settings: dict[str, Any], agent: dict[str, Any], tools: dict[str, Any],
                kinds: dict[str, int] | None = None) -> dict[str, Any]:
    """Everything that decides a run's answers, one flat field each, so a mismatch can be named field by field.

    Each item's answer type is in its content hash; `kinds` counts them in the dataset field, so a resume names
    e.g. `dataset.answer_types.integer (10 -> 12)` rather than only another hash."""
    listing = "\n".join(f"{i} {digests[i]}" for i in order)
    dataset = {"sha256": _sha(listing)[:16], "samples": len(order), **({"answer_types": kinds} if kinds else {})}
    fields = {"dataset": dataset, "task": task,
              "answers": ANSWERS[task], "format": format, "backend": backend, "model": model, "settings": settings}
    fields.update({k: v for k, v in agent.items() if k != "task"})  # tags, allow, rounds, router, prompts, ...
    fields.update({"tools": tools, "scorer": SCORERS[task], "trompe": __version__})
    return json.loads(json.dumps(fields, default=str))  # as it reads back from run.json


def run_key(fields: dict[str, Any]) -> str:
    """12 hex digits naming the run's answering setup: equal keys, answers from the same model and settings."""
    kept = {k: v for k, v in fields.items() if k not in RUN_KEY_EXCLUDES}
    return _sha(json.dumps(kept, sort_keys=True))[:12]


def legacy_fingerprint(meta: dict[str, Any]) -> dict[str, Any]:
    """The fields a run.json written before fingerprints already holds (a resume still refuses a model change)."""
    return {k: meta[k] for k in ("task", "backend", "model", "normalize", "no_tools", "prompts") if k in meta}


def differences(recorded: dict[str, Any], current: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, 'field (recorded -> now)') for every recorded field the current command changes."""
    return [(k, text) for k in recorded if recorded[k] != current.get(k)
            for text in _change(k, recorded[k], current.get(k))]


def _change(name: str, before: Any, now: Any) -> list[str]:
    """What changed, down to the differing keys of a mapping and the added/removed names of a list."""
    if isinstance(before, dict) and isinstance(now, dict):
        return [text for k in sorted(set(before) | set(now)) if before.get(k) != now.get(k)
                for text in _change(f"{name}.{k}", before.get(k), now.get(k))]
    if isinstance(before, list) and isinstance(now, list) and all(isinstance(v, str) for v in before + now):
        added, removed = [v for v in now if v not in before], [v for v in before if v not in now]
        if added or removed:
            return [f"{name} ({' '.join([*(f'+{v}' for v in added), *(f'-{v}' for v in removed)])})"]
        return [f"{name} (same names, another order)"]
    return [f"{name} ({_short(before)} -> {_short(now)})"]


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 48 else text[:45] + "..."


def changed_sample(record: SampleResult, digests: dict[str, str]) -> bool:
    """Whether a record in the folder holds other content than the sample of its id now (never paired)."""
    return bool(record.content) and record.id in digests and record.content != digests[record.id]


def one_run(run_dir: Path, records: list[SampleResult]) -> None:
    """Refuse answers of two runs (another model or setting) in one folder: their accuracy would be neither's."""
    keys = Counter(r.run for r in records if r.run and not r.failed)
    if len(keys) > 1:
        models = {key: ", ".join(sorted({str(r.model) for r in records if r.run == key})) for key in keys}
        parts = [f"run {key}: {n} samples, model {models[key]}" for key, n in keys.most_common()]
        raise ValueError(f"{run_dir}: results.jsonl holds lines from {len(keys)} runs: {'; '.join(parts)}; "
                         "keep each run in a folder of its own")
