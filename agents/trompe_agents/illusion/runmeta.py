"""A run folder's run.json: what produced its results, and whether a rerun may resume into it."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import datetime, UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..runfolder import RunFolder
from ..statefiles import read_json, write_json_atomic
from .identity import CHANGEABLE, as_today, continued, differences, legacy_fingerprint, run_key
from .runoptions import RunOptions

if TYPE_CHECKING:
    from ..backends.base import Backend
    from .agent import AgentConfig

META = "run.json"


def now() -> str:
    """A UTC timestamp to the second, as the records write it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_meta(run_dir: Path) -> dict[str, Any]:
    folder = RunFolder(run_dir)
    return folder.read_json(META) if folder.exists(META) else {}


def amend_meta(run_dir: Path, **fields: Any) -> None:
    """Set fields of run.json once the run is over (what the vendor really took under --preset), atomically."""
    path = Path(run_dir) / META
    write_json_atomic(path, {**read_json(path), **fields})


def check_resume(out: Path, identity: dict[str, Any], order: list[tuple[str, Any]], answered: bool,
                 altered: list[str], allow: Iterable[str]) -> dict[str, Any]:
    """Refuse to add to a folder whose run differs from this command in anything that decides an answer; give
    back the fingerprint to continue with (identity.continued: the recorded one where nothing changed).

    `answered`: whether the folder holds a single answer; one without (every sample failed, e.g. on a mistyped
    model name) holds nothing to mix. `altered`: ids answered there whose content differs now
    (identity.changed_sample)."""
    meta = read_meta(out)
    if not meta or not answered:
        return identity
    recorded = meta.get("fingerprint") or legacy_fingerprint(meta)
    changed = differences(as_today(recorded), identity)
    if "fingerprint" not in meta and meta.get("order") and [i for i, _ in meta["order"]] != [i for i, _ in order]:
        changed.append(("dataset", f"dataset ({meta.get('dataset')} -> another sample list)"))
    changeable = set(CHANGEABLE) if _only_limit(meta, identity, order) else set(CHANGEABLE) - {"dataset"}
    refused = [text for name, text in changed if name not in set(allow) & changeable]
    if refused:
        fields = sorted({name for name, _ in changed if name not in set(allow) & changeable})
        why = "; ".join(CHANGEABLE.get(f, "") for f in fields)
        hint = f", or pass --allow-change {','.join(fields)} to continue it ({why})" if set(fields) <= changeable \
            else ""
        raise ValueError(f"{out} holds another run: {'; '.join(refused)}; start a new folder with another "
                         f"--out{hint}")
    if altered:
        raise ValueError(f"{out}: {len(altered)} answered samples have other images, question, options, answer type "
                         f"or label now ({', '.join(altered[:5])}); start a new folder with another --out")
    return continued(recorded, identity)


def _only_limit(meta: dict[str, Any], identity: dict[str, Any], order: list[tuple[str, Any]]) -> bool:
    """Whether the samples used before and now are one list cut at two places (another --limit of one dataset)."""
    if "fingerprint" not in meta:
        return False
    before = [i for i, _ in meta.get("order", [])][: meta["fingerprint"]["dataset"]["samples"]]
    now = [i for i, _ in order][: identity["dataset"]["samples"]]
    shorter = min(len(before), len(now))
    return before[:shorter] == now[:shorter]


def write_meta(out: Path, backend: Backend, config: AgentConfig, options: RunOptions, total: int,
               todo: int, order: list[tuple[str, Any]], identity: dict[str, Any]) -> None:
    """run.json: what produced the results and its fingerprint; each invocation (first run or resume) is appended."""
    path = out / META
    meta = read_meta(out) or {"created": now()}
    invocation = {"started": now(), "command": options.meta.get("command", sys.argv), "backend": backend.name,
                  "model": backend.model, "agent": config.describe(), "concurrency": options.concurrency,
                  "rate_limit": options.rate_limit, "samples": total, "todo": todo, "trompe": identity["trompe"],
                  "allowed_changes": [text for _, text in differences(meta.get("fingerprint") or {}, identity)]}
    meta.update({k: v for k, v in options.meta.items() if k != "command"})
    meta.update({"task": config.task, "backend": backend.name, "model": backend.model,
                 "normalize": config.normalize, "no_tools": config.no_tools, "prompts": config.prompts.hashes(),
                 "order": order, "trompe": identity["trompe"], "fingerprint": identity, "run_key": run_key(identity)})
    meta.setdefault("invocations", []).append(invocation)
    write_json_atomic(path, meta)
