"""`trompe import-inspect LOG --out RUN`: an Inspect log of a trompe task as a trompe run folder, so
`illusion-agent report`, `compare` and `submit` read it like any run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from trompe_kernel.exits import OK

INSTALL = "pip install 'trompe[inspect]'"


def register(subparsers: argparse._SubParsersAction) -> None:
    command = subparsers.add_parser("import-inspect", help="convert an Inspect log of a trompe task into a run "
                                                           "folder (for illusion-agent report/compare/submit)")
    command.add_argument("log", type=Path, help="the Inspect log file (.eval or .json)")
    command.add_argument("--out", type=Path, required=True, help="run folder to write (results.jsonl, run.json)")
    command.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    out = import_log(args.log, args.out)
    print(f"run folder: {out} (next: illusion-agent report {out})")
    return OK


def _records(log: Any) -> list[dict[str, Any]]:
    """Each sample's result record (first epoch): the illusion agent's own, else the one its score was made of."""
    from .samples import RECORD

    records: dict[str, dict[str, Any]] = {}
    for sample in log.samples or []:
        score = (sample.scores or {}).get("answer")
        record = sample.store.get(RECORD) or ((score.metadata or {}).get("record") if score else None)
        if record is not None:
            records.setdefault(str(record["id"]), record)
    return list(records.values())


def _agent(log: Any) -> dict[str, Any]:
    from .samples import CONFIG

    return next((s.store[CONFIG] for s in log.samples or [] if CONFIG in s.store), {})


def run_meta(log: Any, run: dict[str, Any], agent: dict[str, Any], done: int, path: Path) -> dict[str, Any]:
    """run.json as `illusion-agent run` writes it, from the log's header; the invocation names the log."""
    spec = log.eval
    meta = {k: run.get(k) for k in ("dataset", "format", "split", "counts", "images_root", "labels")}
    invocation = {"started": spec.created, "command": ["inspect", "eval", spec.task], "backend": "inspect",
                  "model": spec.model, "agent": agent, "samples": len(run["order"]), "todo": done,
                  "inspect_log": str(path), "solver": spec.solver, "solver_args": spec.solver_args}
    return {"created": spec.created, **meta, "task": run["task"], "backend": "inspect", "model": spec.model,
            "normalize": agent.get("normalize", False), "no_tools": agent.get("no_tools", False),
            "prompts": agent.get("prompts", {}), "order": run["order"], "invocations": [invocation]}


def import_log(path: Path | str, out: Path | str) -> Path:
    """Write RUN/results.jsonl and RUN/run.json from one Inspect log; RUN may hold that eval's traces already."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ValueError(f"import-inspect needs Inspect AI: {INSTALL}") from None
    from trompe_agents.illusion.results import RESULTS  # here: `trompe --help` stays quick
    from trompe_agents.illusion.runmeta import META
    from trompe_agents.statefiles import write_atomic, write_json_atomic

    path, out = Path(path), Path(out)
    if not path.is_file():
        raise ValueError(f"log: file not found: {path}")
    if (out / RESULTS).exists():
        raise ValueError(f"--out: {out} holds a run already ({RESULTS}); choose another folder")
    log = read_eval_log(str(path))
    run = (log.eval.metadata or {}).get("trompe")
    if not run:
        raise ValueError(f"log: {path} is not a log of a trompe task (trompe/datacv_task1, ...): its task is "
                         f"{log.eval.task!r}")
    records = _records(log)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / RESULTS, "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records))
    write_json_atomic(out / META, run_meta(log, run, _agent(log), len(records), path))
    return out
