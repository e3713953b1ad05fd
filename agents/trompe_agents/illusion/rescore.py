"""`illusion-agent score RUN`: a finished run re-scored by a named harness's scorer, with no new model calls.

The numbers come from results.jsonl alone (datasets/scorers.py reads each record's reply or answer), so one run
gives the official, lmms-eval and VLMEvalKit figures side by side; `--json` prints them machine-readable on stdout
(as every command's `--json` does), `--output FILE` writes them to a file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from trompe_kernel.exits import OK

from ..backends.base import Backend, BackendError, BackendOptions
from ..datasets.judges import judge_for, judge_unread
from ..datasets.metrics import benchmark_metrics, summary_line
from ..datasets.scorers import OFFICIAL, check, decided_by, reply, scorer_names, scorers_for
from ..plugins import backend_entry, backend_settings, create_backend
from ..statefiles import write_json_atomic
from .stats import wilson

def add_score_parser(subs: argparse._SubParsersAction) -> None:
    score = subs.add_parser("score", help="re-score a finished run with a named harness's scorer (no new calls)")
    score.add_argument("run_dir", type=Path)
    score.add_argument("--scorer", choices=scorer_names(), default=OFFICIAL,
                       help="official (the benchmark's own, default), lmms-eval or vlmevalkit (docs/datasets.md)")
    score.add_argument("--json", action="store_true", help="print the figures as JSON to stdout instead of the summary")
    score.add_argument("--output", type=Path, metavar="FILE", help="also write the figures as JSON to FILE (e.g. "
                                                                    "RUN_DIR/report/score_vlmevalkit.json)")
    score.add_argument("--judge-backend", metavar="NAME",
                       help="ask this backend what a reply answers, as the harness asks its LLM judge (BLINK "
                            "official and vlmevalkit, V* vlmevalkit, HallusionBench every scorer; docs/datasets.md)")
    score.add_argument("--judge-model", metavar="MODEL", help="the judge's model (with --judge-backend)")


def score_run(run_dir: Path, scorer: str = OFFICIAL, judge: Backend | None = None) -> dict[str, Any]:
    """The run's figures under `scorer`: headline metric, per-group accuracy with 95% Wilson intervals, counts;
    with a judge (datasets/judges.py), the replies no rule reads are matched by it, and say so in `decided_by`."""
    from .results import read_results  # the run machinery only when a run is scored
    from .runmeta import read_meta

    run_dir = Path(run_dir)
    records = list(read_results(run_dir).values())
    if not records:
        raise ValueError(f"score: {run_dir} holds no results.jsonl records (is it a run folder?)")
    fmt = read_meta(run_dir).get("format")
    check(fmt, scorer)
    judged: dict[str, str] = {}
    if judge is not None:
        judged = asyncio.run(judge_unread(judge, judge_for(fmt, scorer), records, lambda r: reply(r, fmt)))
        records = [replace(r, reply=judged[r.id]) if r.id in judged else r for r in records]
    metrics = benchmark_metrics(fmt, records, scorer)
    groups = []
    for name, accuracy, samples in metrics.groups:
        right = round(accuracy * samples)
        groups.append({"name": name, "accuracy": accuracy, "samples": samples, "right": right,
                       "ci95": list(wilson(right, samples))})
    decided = {**decided_by(fmt, records, scorer),
               **{i: f"judge {judge.model}" for i in judged}}
    return {"run": str(run_dir), "format": fmt, "scorer": metrics.scorer, "rule": metrics.rule,
            "metric": metrics.headline, "groups": groups,
            "decided_by": {"counts": dict(Counter(decided.values()).most_common()), "items": decided},
            "counts": {"records": len(records), "scored": metrics.scored, "failed": metrics.failed,
                       "unlabelled": metrics.unscored},
            "judge": judge.model if judge is not None else None, "scorers": scorers_for(fmt),
            "summary": summary_line(metrics) + (f"; judge {judge.model} decided {len(judged)}" if judge else "")}


def judge_backend(args: argparse.Namespace) -> Backend | None:
    """The --judge-backend, or None; a backend that cannot be made is a clear error naming the option."""
    if args.judge_backend is None:
        if args.judge_model:
            raise ValueError("--judge-model needs --judge-backend")
        return None
    try:
        takes = "temperature" in backend_entry(args.judge_backend).settings.names()
        settings = backend_settings(args.judge_backend, {"temperature": 0} if takes else {})  # a judge is greedy
        return create_backend(args.judge_backend, BackendOptions(model=args.judge_model, settings=settings))
    except BackendError as exc:
        raise ValueError(f"--judge-backend: {' '.join(str(exc).split())}") from None


def score_command(args: argparse.Namespace) -> int:
    """Print the run's summary under the scorer (with --json, the figures instead); --output writes them too."""
    figures = score_run(args.run_dir, args.scorer, judge_backend(args))
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(args.output, figures)
    if args.json:
        print(json.dumps(figures, indent=2, ensure_ascii=False))
        return OK
    print(figures["summary"])
    if args.output is not None:
        print(f"json: {args.output}")
    return OK
