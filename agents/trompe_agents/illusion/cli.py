"""`illusion-agent`: ask one question, run a dataset (resumable), write a report, write a submission."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import datetime
from pathlib import Path

from trompe_server.commandline import entry_point, parse
from trompe_kernel.errors import PluginError
from trompe_kernel.exits import FAILED, OK, STOPPED, UNANSWERED, exit_with
from trompe_kernel.version import __version__

from ..cliopts import (
    add_backend_args,
    add_executor_args,
    add_rounds_args,
    add_run_args,
    add_server_args,
    backend_from_args,
    backend_options_from_args,
    comma_list,
    fraction,
    out_folder,
    server_choice_from_args,
    toolclient_from_args,
)
from ..backends.anthropic_batches import BATCH_WITH_TOOLS
from ..executors import create_executor
from ..executors.base import ExecutorFailed
from .. import presets
from ..stopping import exit_status, run_stoppable
from ..toolclient import ToolClientError
from ..trace import Trace
from ..datasets.cliargs import add_dataset_args, describe_counts
from ..datasets.scorers import scorer_names, scorers_for
from .rescore import add_score_parser, score_command
from .agent import AgentConfig, IllusionAgent
from .classify import CLASSIFY_MODES, ROUTERS
from .job import WorkerSpec
from .lock import RunBusy
from .pricing import parse_prices
from .prompts import NAMES, Prompts, parse_overrides
from .router import ANALYSIS_TOOLS, CORE_TOOLS

PROG = "illusion-agent"
DESCRIPTION = "Tool-guided answers to visual illusion questions."


def tools_help() -> str:
    """`--tools` as this command uses it: the paper's per-task tool table unless tags are named (agent.py)."""
    return (f"comma-separated tool tags to offer instead of the task's table, e.g. core,analysis (default: Task I "
            f"{', '.join(CORE_TOOLS)} only, as the DataCV challenge forbids measurement tools for Task I; Task II "
            f"adds {', '.join(ANALYSIS_TOOLS)}; docs/illusion-agent.md, Tools per task)")


def add_global_args(parser: argparse.ArgumentParser) -> None:
    add_backend_args(parser)
    add_rounds_args(parser)
    add_server_args(parser, {"tools": {"help": tools_help()}})


def add_agent_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("illusion agent")
    group.add_argument("--task", type=int, choices=(1, 2),
                       help="1: yes/no about a classic illusion; 2: multiple choice (default: from the dataset's "
                            "format, or 2 when --choices are given, else 1)")
    group.add_argument("--rescue-rounds", type=int, default=3, help="rounds of the rescue agent (default 3)")
    group.add_argument("--allow", help="comma-separated tool names to offer (within the task's tags)")
    group.add_argument("--no-tools", action="store_true",
                       help="the baseline: same prompts, no tools offered (recorded in the run; compare runs with "
                            f"`{PROG} compare`)")
    group.add_argument("--normalize", action="store_true",
                       help="snap near-flat colours onto their palette before the model sees the image "
                            "(against JPEG artefacts; off by default, recorded in the run)")
    group.add_argument("--router", choices=ROUTERS, default="model",
                       help="who names the question's category: model (the paper's way, default; the regex router "
                            "is the fallback), both (the model, shown the regex router's guess) or regex")
    group.add_argument("--classify", choices=CLASSIFY_MODES, default="first-turn",
                       help="how the model classifies: first-turn (agent prompt and images, default) or call (one "
                            "short text-only request)")
    presets.add_preset_arg(group, PROG)
    group.add_argument("--prompt", action="append", metavar="[NAME=]FILE",
                       help=f"replace a prompt: FILE replaces the task's main prompt, NAME=FILE one of "
                            f"{', '.join(NAMES)} (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every option and subcommand, on `illusion-agent` and on `trompe illusion` alike."""
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.set_defaults(prog=parser.prog)  # the command as typed, recorded in run.json
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
    add_dataset_args(run)
    run.add_argument("--out", type=out_folder, required=True, help="run folder: results.jsonl, run.json, traces/")
    add_run_args(run)
    run.add_argument("--rate-limit", type=float, metavar="RPM", help="backend requests per minute for the whole run: "
                     "each of --workers N keeps to 1/N of it (default: none)")
    add_executor_args(run, "samples are answered (results.jsonl is written by this process either way)",
                      "its own backend client and tool server")
    run.add_argument("--retry-errors", action="store_true",
                     help="rerun every sample without a model answer (an error of any kind, or an old default)")
    run.add_argument("--allow-change", type=comma_list, default=[], metavar="FIELD[,FIELD]",
                     help="resume across a harmless difference from the folder's run: dataset (another --limit of "
                          "the same sample list) or trompe (another trompe version); any other difference is "
                          "refused (docs/illusion-agent.md, a run's record)")
    run.add_argument("--price", action="append", metavar="MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]",
                     help="USD per million input/output (and prompt-cache read/write) tokens for the cost "
                          "estimate (repeatable)")
    add_agent_args(run)

    routing = subs.add_parser("route", help="the regex router's category for a question, or its accuracy per "
                                            "category on a labelled question file")
    routing.add_argument("question", nargs="?", help="a question to route")
    routing.add_argument("--task", type=int, choices=(1, 2), default=1, help="1 or 2 (default 1)")
    routing.add_argument("--questions", type=Path, metavar="JSONL",
                         help="labelled questions, one JSON object a line: task, category, question")
    routing.add_argument("--min-accuracy", type=fraction, metavar="F",
                         help="exit with status 1 when the overall accuracy is below F (0-1)")

    report = subs.add_parser("report", help="write RUN_DIR/report/: index.html, summary.json, samples.csv, plots/")
    report.add_argument("run_dir", type=Path)
    report.add_argument("--json", action="store_true", help="print the summary JSON to stdout (also written to "
                                                            "report/summary.json)")
    report.add_argument("--scorer", choices=scorer_names(), default="official",
                        help="whose numbers: the benchmark's official scorer (default), or lmms-eval's or "
                             "VLMEvalKit's where they differ (docs/datasets.md lists them); re-scores, no new calls")

    add_score_parser(subs)

    compare = subs.add_parser("compare", help="accuracy per category/family of two runs side by side, and the "
                                               "samples that flipped (e.g. a run and its --no-tools baseline)")
    compare.add_argument("run_a", type=Path, help="a run folder, or an lmms-eval samples log (*_samples_*.jsonl)")
    compare.add_argument("run_b", type=Path, help="the same for the other run")
    compare.add_argument("--html", type=Path, help="HTML file to write, compare.json beside it (default: "
                                                   "RUN_B/report/compare.html; beside a log, LOG-compare.html)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON instead of text")

    trace = subs.add_parser("trace", help="read traces without Python")
    trace_subs = trace.add_subparsers(dest="trace_command", required=True)
    show = trace_subs.add_parser("show", help="print a run's or a sample's trace as text (turns, tool calls with "
                                              "arguments, image ids, errors), or write it as an HTML page")
    show.add_argument("path", type=Path, help="a run folder, a sample's trace folder, or its trace.jsonl")
    show.add_argument("--sample", metavar="ID", help="only this sample of a run")
    show.add_argument("--html", type=Path, nargs="?", const=True, metavar="FILE",
                      help="write an HTML page instead (default FILE: trace.html in the trace or run folder)")
    show.add_argument("--width", type=int, default=300, help="shorten texts to this many characters (default 300)")

    submit = subs.add_parser("submit", help="write the challenge submission file of a run")
    submit.add_argument("run_dir", type=Path)
    submit.add_argument("--format", default="datacv", choices=("datacv",))
    submit.add_argument("--output", type=Path, help="file to write (default: RUN_DIR/submission_<format>_task<N>.txt)")

    for sub in (ask, run):  # global options may come after the subcommand too, without clobbering earlier ones
        add_global_args(sub)
        for action in sub._actions:
            if action.dest in _global_dests(parser):
                action.default = argparse.SUPPRESS


def route_command(args: argparse.Namespace) -> int:
    """Print one question's route, or the per-category accuracy table of a labelled file."""
    from .router import route
    from .router_report import evaluate, load_questions

    if (args.question is None) == (args.questions is None):
        raise ValueError("give either a QUESTION or --questions FILE")
    if args.question is not None:
        routed = route(args.question, args.task)
        print(f"category: {routed.category} (score {routed.score}); tools: {', '.join(routed.tools)}")
        for cue in routed.matched:
            print(f"cue: {cue}")
        return OK
    report = evaluate(load_questions(args.questions))
    print(report.table())
    if args.min_accuracy is not None and report.accuracy < args.min_accuracy:
        print(f"accuracy {report.accuracy:.1%} is below --min-accuracy {args.min_accuracy:.1%}", file=sys.stderr)
        return FAILED
    return OK


def compare_command(args: argparse.Namespace) -> int:
    """Print the comparison and write it as HTML."""
    from .compare import compare_runs, write_compare

    comparison = compare_runs(args.run_a, args.run_b)
    beside = args.run_b.with_name(f"{args.run_b.stem}-compare.html") if args.run_b.is_file() else None
    html = write_compare(comparison, args.html or beside or args.run_b / "report" / "compare.html")
    if args.json:
        print(json.dumps(comparison.to_json(html), indent=2))
        return OK
    print(comparison.text())
    print(f"html: {html} (and {html.with_suffix('.json').name} beside it)")
    return OK


def _global_dests(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions if a.option_strings and a.dest != "help"}


def quiet_http_logs() -> None:
    """The in-process MCP server turns on INFO logging; one line per HTTP request would bury the progress bar."""
    for name in ("httpx", "httpx2"):
        logging.getLogger(name).setLevel(logging.WARNING)


def agent_config(args: argparse.Namespace) -> AgentConfig:
    if getattr(args, "service_tier", None) == "batch" and not args.no_tools:  # before the router's own batch
        raise exit_with(f"{PROG}: {BATCH_WITH_TOOLS}")
    tags, allow = comma_list(args.tools), comma_list(args.allow)
    return AgentConfig(task=args.task, tags=tags, allow=allow, max_rounds=args.max_rounds,
                       rescue_rounds=args.rescue_rounds, normalize=args.normalize, no_tools=args.no_tools,
                       router=args.router,
                       classify=args.classify,
                       prompts=Prompts(parse_overrides(args.prompt, args.task)))


async def ask(args: argparse.Namespace) -> int:
    args.task = args.task or (2 if args.choices else 1)
    for image in args.image:
        if not image.is_file():
            raise exit_with(f"{PROG} ask: image: no such file {str(image)!r}")
    config = agent_config(args)
    backend = backend_from_args(args, PROG)
    if args.chosen:
        args.chosen.check(presets.planned(backend), PROG)
    trace = args.trace or Path(f"illusion-trace-{datetime.now():%Y%m%d-%H%M%S}")
    async with toolclient_from_args(args) as tools:
        await tools.list_tools(config.effective_tags, config.allow)  # fail once, not as a default answer
        outcome = await IllusionAgent(backend, tools, config).answer(args.image, args.question, args.choices,
                                                                     trace)
    if args.chosen:  # what the vendor really took (a refusal seen mid-answer): said once and kept in the trace
        args.chosen.check(presets.sent_summary([trace / "trace.jsonl"]), PROG)
        Trace(trace).event("preset", PROG, **args.chosen.record())
    if outcome.answer is None:  # never a made-up answer: one line naming what failed, and a non-zero status
        from .results import first_error

        why = first_error("; ".join(outcome.errors)) or outcome.error_kind
        print(f"{PROG} ask: no answer ({outcome.error_kind}): {why}", file=sys.stderr)
        print(f"trace: {trace / 'trace.jsonl'}", file=sys.stderr)
        return UNANSWERED
    print(f"answer: {outcome.answer}")
    print(f"reasons: {outcome.reasons}")
    print(f"answered by: {outcome.agent} agent, {outcome.rounds} rounds, {outcome.usage.total} tokens, "
          f"category {outcome.route.category}")
    for error in outcome.errors:
        print(f"note: {error}")
    print(f"trace: {trace / 'trace.jsonl'}")
    return OK


async def run(args: argparse.Namespace) -> int:
    from ..datasets.load import load_dataset, resolve_task
    from ..datasets.metrics import benchmark_metrics, summary_line
    from .identity import answer_settings
    from .runmeta import amend_meta
    from .runner import RunStopped, run_samples
    from .runoptions import RunOptions
    from .stats import summary

    dataset = load_dataset(args.dataset, format=args.format, labels=args.labels, images_root=args.images_root,
                           split=args.split, stream=True,  # a probe set is read again as it runs, never held whole
                           images_anywhere=args.images_anywhere)
    args.task = resolve_task(args.task, dataset.format, dataset, args.dataset,
                             warn=lambda message: print(f"{PROG} run: warning: {message}", file=sys.stderr))
    config = agent_config(args)
    options = RunOptions(out=args.out, concurrency=args.concurrency, limit=args.limit, rate_limit=args.rate_limit,
                         retry_errors=args.retry_errors, prices=parse_prices(args.price, args.service_tier),
                         progress=not args.no_progress, allow_change=tuple(args.allow_change or ()),
                         settings=answer_settings(backend_options_from_args(args, PROG)),
                         meta={"command": [*args.prog.split(), *args.argv], "dataset": str(args.dataset),
                               "format": dataset.format, "split": args.split, "counts": dataset.counts,
                               "images_root": str(args.images_root) if args.images_root else None,
                               "labels": str(args.labels) if args.labels else None})
    backend = backend_from_args(args, PROG)  # a missing key is its one line, before anything else is said
    print(f"{len(dataset)} samples from {args.dataset} ({dataset.format}, Task {args.task})"
          f"{describe_counts(dataset)}", file=sys.stderr)
    if args.chosen:  # --preset: what this backend will send, against the paper's settings, said once
        args.chosen.check(presets.planned(backend), PROG)
        options.meta["preset"] = args.chosen.record()
    executor = create_executor(args.executor, WorkerSpec(
        backend=args.backend, options=backend_options_from_args(args, PROG), config=config, out=args.out.resolve(),
        server=server_choice_from_args(args), prices=options.prices, rate_limit=args.rate_limit),
        workers=args.workers, concurrency=args.concurrency, ray_address=args.ray_address)
    async with toolclient_from_args(args) as tools:
        try:
            records = await run_samples(dataset, backend, tools, config, options, executor=executor)
        except RunStopped as stop:
            print(f"{PROG} run: {stop}", file=sys.stderr)
            print("fix it, then rerun the same command with --retry-errors to redo those samples", file=sys.stderr)
            return STOPPED
        except ExecutorFailed as exc:  # the records written so far stay in results.jsonl: a rerun resumes
            raise exit_with(f"{PROG} run: --executor {args.executor}: {exc}", FAILED) from None
    if args.chosen:  # what the vendor really took, from every request of the run: said once and kept in run.json
        args.chosen.check(presets.sent_summary(presets.run_traces(args.out)), PROG)
        amend_meta(args.out, preset=args.chosen.record())
    # each a streaming pass over results.jsonl: the run kept no records
    print(f"{summary(records.values())}; in {args.out / 'results.jsonl'}")
    print(summary_line(benchmark_metrics(dataset.format, records.values())))
    print(f"next: {PROG} report {args.out}")
    if others := scorers_for(dataset.format)[1:]:
        print(f"other harnesses' numbers: {PROG} score {args.out} --scorer {'|'.join(others)}")
    if any(r.failed for r in records.values()):
        print("some samples have no answer; rerun with --retry-errors to redo them", file=sys.stderr)
        return UNANSWERED
    return OK


def trace_command(args: argparse.Namespace) -> int:
    from ..traceview import show_text, write_html

    if args.width < 20:
        raise ValueError(f"--width: {args.width} is too small; accepted: 20 or more")
    if args.html is None:
        print(show_text(args.path, args.sample, args.width))
    else:
        out = None if args.html is True else args.html
        print(f"trace page: {write_html(args.path, out, args.sample)}")
    return OK


@entry_point
def main(argv: list[str] | None = None) -> int:
    args = parse(build_parser(), argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return execute(args)


def execute(args: argparse.Namespace) -> int:
    """Run the parsed subcommand; `args.argv` holds the words after the command (recorded in run.json, and read
    again by `--preset` to tell which options were typed)."""
    args.chosen = presets.from_args(args, build_parser, PROG, args.argv)  # --preset paper
    quiet_http_logs()
    try:
        if args.command == "ask":
            return run_stoppable(ask(args))
        if args.command == "run":
            return run_stoppable(run(args))
        if args.command == "route":
            return route_command(args)
        if args.command == "compare":
            return compare_command(args)
        if args.command == "score":
            return score_command(args)
        if args.command == "trace":
            return trace_command(args)
        if args.command == "report":
            from .report import write_report

            index = write_report(args.run_dir, args.scorer)
            if args.json:
                print((index.parent / "summary.json").read_text(encoding="utf-8"), end="")
            else:
                print(f"report: {index}; samples.csv, summary.json and plots/ beside it")
            return OK
        from .submit import write_submission

        print(f"submission: {write_submission(args.run_dir, args.format, args.output)} (model.json beside it)")
        return OK
    except RunBusy as exc:  # another run holds the folder: a failure at run time, not a wrong command line
        raise exit_with(f"{PROG} {args.command}: {exc}", FAILED) from None
    except (ValueError, FileNotFoundError, ToolClientError, PluginError) as exc:  # PluginError: --tools
        raise exit_with(f"{PROG} {args.command}: {exc}") from None
    except BrokenPipeError:  # the reader of stdout went away (`| head`): the entry point ends quietly
        raise
    except OSError as exc:  # a full disk, a file over its size limit: files are replaced whole, the old ones kept
        raise exit_with(f"{PROG} {args.command}: {exc}", FAILED) from None
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM or SIGHUP (stopping.py): the main task was cancelled first
        print(f"{PROG}: interrupted; rerun the same command to resume", file=sys.stderr)
        return exit_status(exc)


if __name__ == "__main__":
    sys.exit(main())
