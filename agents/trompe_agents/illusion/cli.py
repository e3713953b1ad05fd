"""`illusion-agent`: ask one question, run a dataset (resumable), write a report, write a submission."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

from trompe_server.errors import PluginError

from ..cliopts import add_backend_args, add_server_args, backend_from_args, comma_list, toolclient_from_args
from ..toolclient import ToolClientError
from .agent import AgentConfig, IllusionAgent
from .pricing import parse_prices
from .prompts import NAMES, Prompts, parse_overrides

PROG = "illusion-agent"


def add_global_args(parser: argparse.ArgumentParser) -> None:
    add_backend_args(parser)
    add_server_args(parser)


def add_agent_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("illusion agent")
    group.add_argument("--task", type=int, choices=(1, 2), default=1,
                       help="1: yes/no about a classic illusion; 2: multiple choice A-D (default 1)")
    group.add_argument("--rescue-rounds", type=int, default=3, help="rounds of the rescue agent (default 3)")
    group.add_argument("--allow", help="comma-separated tool names to offer (within the task's tags)")
    group.add_argument("--normalize", action="store_true",
                       help="snap near-flat colours onto their palette before the model sees the image "
                            "(against JPEG artefacts; off by default, recorded in the run)")
    group.add_argument("--prompt", action="append", metavar="[NAME=]FILE",
                       help=f"replace a prompt: FILE replaces the task's main prompt, NAME=FILE one of "
                            f"{', '.join(NAMES)} (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Tool-guided answers to visual illusion questions.")
    add_global_args(parser)
    subs = parser.add_subparsers(dest="command", required=True)

    ask = subs.add_parser("ask", help="answer one question about an image")
    ask.add_argument("image", type=Path, nargs="+", help="the image (more images: image_2, image_3, ...)")
    ask.add_argument("question")
    ask.add_argument("--choices", nargs="+", metavar="OPTION", help="Task II option texts, in order A-D")
    ask.add_argument("--trace", type=Path, help="trace folder (default: ./illusion-trace-<time>)")
    add_agent_args(ask)

    run = subs.add_parser("run", help="answer every sample of a dataset; a rerun resumes where it stopped")
    run.add_argument("--dataset", type=Path, required=True, help="dataset file or folder (probes.jsonl, ...)")
    run.add_argument("--format", help="dataset format (default: guessed from the path)")
    run.add_argument("--labels", type=Path, help="label file joining answers to an unlabelled set")
    run.add_argument("--out", type=Path, required=True, help="run folder: results.jsonl, run.json, traces/")
    run.add_argument("--concurrency", type=int, default=4, help="samples in flight at once (default 4)")
    run.add_argument("--limit", type=int, help="only the first N samples")
    run.add_argument("--rate-limit", type=float, metavar="RPM", help="backend requests per minute (default: none)")
    run.add_argument("--retry-errors", action="store_true", help="rerun samples whose run failed with an error")
    run.add_argument("--price", action="append", metavar="MODEL=IN,OUT",
                     help="USD per million input/output tokens for the cost estimate (repeatable)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_agent_args(run)

    report = subs.add_parser("report", help="write RUN_DIR/report/index.html")
    report.add_argument("run_dir", type=Path)

    submit = subs.add_parser("submit", help="write the challenge submission file of a run")
    submit.add_argument("run_dir", type=Path)
    submit.add_argument("--format", default="datacv", choices=("datacv",))
    submit.add_argument("--output", type=Path, help="file to write (default: RUN_DIR/submission_<format>_task<N>.txt)")

    for sub in (ask, run):  # global options may come after the subcommand too, without clobbering earlier ones
        add_global_args(sub)
        for action in sub._actions:
            if action.dest in _global_dests(parser):
                action.default = argparse.SUPPRESS
    return parser


def _global_dests(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions if a.option_strings and a.dest != "help"}


def quiet_http_logs() -> None:
    """The in-process MCP server turns on INFO logging; one line per HTTP request would bury the progress bar."""
    for name in ("httpx", "httpx2"):
        logging.getLogger(name).setLevel(logging.WARNING)


def agent_config(args: argparse.Namespace) -> AgentConfig:
    tags, allow = comma_list(args.tools), comma_list(args.allow)
    return AgentConfig(task=args.task, tags=tags, allow=allow, max_rounds=args.max_rounds,
                       rescue_rounds=args.rescue_rounds, normalize=args.normalize,
                       prompts=Prompts(parse_overrides(args.prompt, args.task)))


async def ask(args: argparse.Namespace) -> int:
    for image in args.image:
        if not image.is_file():
            raise SystemExit(f"{PROG} ask: image: no such file {str(image)!r}")
    config = agent_config(args)
    backend = backend_from_args(args, PROG)
    trace = args.trace or Path(f"illusion-trace-{datetime.now():%Y%m%d-%H%M%S}")
    async with toolclient_from_args(args) as tools:
        await tools.list_tools(config.effective_tags, config.allow)  # fail once, not as a default answer
        outcome = await IllusionAgent(backend, tools, config).answer(args.image, args.question, args.choices,
                                                                     trace)
    print(f"answer: {outcome.answer}")
    print(f"reasons: {outcome.reasons}")
    print(f"answered by: {outcome.agent} agent, {outcome.rounds} rounds, {outcome.usage.total} tokens, "
          f"category {outcome.route.category}")
    for error in outcome.errors:
        print(f"note: {error}")
    print(f"trace: {trace / 'trace.jsonl'}")
    return 0


async def run(args: argparse.Namespace) -> int:
    from ..datasets import load_dataset
    from .runner import RunOptions, run_samples

    config = agent_config(args)
    options = RunOptions(out=args.out, concurrency=args.concurrency, limit=args.limit, rate_limit=args.rate_limit,
                         retry_errors=args.retry_errors, prices=parse_prices(args.price),
                         progress=not args.no_progress,
                         meta={"command": [PROG, *args.argv], "dataset": str(args.dataset),
                               "format": args.format, "labels": str(args.labels) if args.labels else None})
    samples = list(load_dataset(args.dataset, format=args.format, labels=args.labels))
    backend = backend_from_args(args, PROG)
    async with toolclient_from_args(args) as tools:
        records = await run_samples(samples, backend, tools, config, options)
    scored = [r for r in records.values() if r.get("correct") is not None]
    accuracy = f", accuracy {sum(r['correct'] for r in scored) / len(scored):.1%}" if scored else ""
    agents = Counter(r.get("agent") for r in records.values())
    print(f"{len(records)} results in {args.out / 'results.jsonl'}{accuracy}; answered by rescue "
          f"{agents['rescue']}, default {agents['default']}, failed {agents[None]}")
    print(f"next: {PROG} report {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # recorded in run.json
    quiet_http_logs()
    try:
        if args.command == "ask":
            return asyncio.run(ask(args))
        if args.command == "run":
            return asyncio.run(run(args))
        if args.command == "report":
            from .report import write_report

            print(f"report: {write_report(args.run_dir)}")
            return 0
        from .submit import write_submission

        print(f"submission: {write_submission(args.run_dir, args.format, args.output)}")
        return 0
    except (ValueError, FileNotFoundError, ToolClientError, PluginError) as exc:  # PluginError: --tools
        raise SystemExit(f"{PROG} {args.command}: {exc}") from None
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
