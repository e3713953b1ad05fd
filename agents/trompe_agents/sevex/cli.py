"""`sevex`: explore visual prompts for a task, apply the best one to a test set, show a run."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from trompe_server.commandline import entry_point, parse
from trompe_kernel.errors import PluginError
from trompe_kernel.exits import FAILED, OK, USAGE, exit_with
from trompe_kernel.version import __version__

from .. import presets
from ..backends.base import BackendError
from ..executors.base import ExecutorFailed
from ..costs import cost, parse_prices
from ..messages import Usage
from ..cliopts import (
    BACKEND,
    add_backend_args,
    add_executor_args,
    add_run_args,
    add_server_args,
    add_shared_option,
    backend_from_args,
    backend_options_from_args,
    named,
    non_negative_float,
    non_negative_int,
    out_folder,
    positive_int,
    server_choice_from_args,
    toolclient_from_args,
)
from ..stopping import exit_status, run_stoppable
from ..runfolder import RunFolder
from ..statefiles import read_json, write_atomic, write_json_atomic
from ..datasets.cliargs import add_dataset_args, describe_counts
from ..datasets.content import sample_digests
from .evaluate import Runner, write_results
from .outcome import dev_accuracy
from .explore import ExploreConfig, Explorer, RunExists, choose_dev
from .nuct import PAPER_GAIN_SCALE, NUCTParams
from .prompt_dir import resolve
from .roles import Roles
from .isolation import SandboxUnavailable, choose as choose_sandbox, sandbox_names
from .sandbox import Sandbox, SandboxLimits
from .show import render
from .strategies import choose_strategy, strategy_names, uses_explorer
from .tasks import get_task

DEFAULT_BACKENDS = {"explorer": "claude", "target": "gemini"}
# As in the SEVEX paper: thinking on for idea generation and implementation, off for the benchmark model.
DEFAULT_THINKING = {"explorer": "medium", "target": "off"}
DEFAULT_ITERATIONS = 50


def _add_role_backend(parser: argparse.ArgumentParser, role: str) -> None:
    """Every backend option with the role's prefix (--target-model, --explorer-image-format, ...)."""
    add_backend_args(parser, role, overrides={
        "backend": {"default": None, "help": f"backend of the {role} (default {DEFAULT_BACKENDS[role]}; on "
                                             "--resume, the run's)"},
        "thinking": {"default": DEFAULT_THINKING[role],
                     "help": f"how much the {role} thinks (default {DEFAULT_THINKING[role]}, as in the SEVEX paper)"}})


def _backend(args: argparse.Namespace, role: str):
    """The role's backend, built by the shared builder; a role that no option and no run names gets its default."""
    setattr(args, f"{role}_backend", getattr(args, f"{role}_backend") or DEFAULT_BACKENDS[role])
    return backend_from_args(args, "sevex", role)


def _distributed(args: argparse.Namespace, task_name: str, description: str | None):
    """With --workers or --executor ray: candidates are evaluated by worker processes or Ray actors."""
    if args.executor == "local" and args.workers == 1:
        return None
    from .distributed import Distributed, EvalJob

    job = EvalJob(target=args.target_backend, options=backend_options_from_args(args, "sevex", "target"),
                  task=task_name,
                  task_description=description, sandbox=args.sandbox,
                  limits=SandboxLimits(wall_seconds=args.timeout), server=server_choice_from_args(args))
    return Distributed(job, args.executor, args.workers, args.concurrency, args.ray_address)


DESCRIPTION = __doc__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sevex", description=DESCRIPTION)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every option and subcommand, on `sevex` and on `trompe sevex` alike."""
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    explore = sub.add_parser("explore", help="search for the best visual prompt on a development set")
    explore.add_argument("--task", help="task name, e.g. LineIntersections, Jigsaw, probes (kept on --resume)")
    explore.add_argument("--task-description", help="describe a custom task (a name not in the list)")
    explore.add_argument("--dev", type=Path, help="development dataset (file or folder); kept from run.json on "
                                                  "--resume")
    explore.add_argument("--format", help="dataset format (default: detected)")
    add_dataset_args(explore)
    explore.add_argument("--dev-size", type=positive_int, default=30, help="samples in the dev set (default 30)")
    explore.add_argument("--seed", type=int, default=0, help="seed for drawing the dev set (default 0)")
    explore.add_argument("--out", type=out_folder, required=True, help="run folder (checkpointed every iteration)")
    explore.add_argument("--iterations", type=non_negative_int,
                         help=f"exploration iterations (default {DEFAULT_ITERATIONS}; on --resume, the run's unless "
                              "given; 0: only the naive baseline)")
    explore.add_argument("--resume", action="store_true", help="continue the run in --out where it stopped")
    explore.add_argument("--strategy", choices=strategy_names(), default="sevex",
                         help="naive, sketchpad (tool use with few-shot examples), ape (SketchPad+APE: prompt "
                              "search from SketchPad's), sevex, or one a plugin registers")
    explore.add_argument("--no-tree", action="store_true", help="ablation: refine one chain of ideas")
    explore.add_argument("--no-backprop", action="store_true", help="ablation: no semantic back-propagation")
    explore.add_argument("--no-abstract", action="store_true", help="ablation: search code, not ideas")
    explore.add_argument("--k", type=positive_int, default=3, help="unexecuted children per executed node (default 3)")
    for name, default in (("expl", 0.5), ("novel", 0.15), ("sat", 0.5)):
        explore.add_argument(f"--lambda-{name}", type=float, default=default,
                             help=f"NUCT lambda_{name} (default {default})")
    explore.add_argument("--gain-scale", type=non_negative_float, default=PAPER_GAIN_SCALE,
                         help=f"weight of the normalised expected-gain rating in NUCT eq. 2 (default "
                              f"{PAPER_GAIN_SCALE:g}, the paper's formula; 0.2 puts a 10/10 rating on the scale of "
                              "accuracy gains)")
    explore.add_argument("--repeats", type=positive_int, default=1,
                         help="dev-set runs per node, reward = their mean accuracy (default 1; the paper's Figure 5 "
                              "averages 5)")
    explore.add_argument("--max-unusable", type=non_negative_int, default=3,
                         help="stop after this many iterations in a row in which the Ideator or Engineer produced "
                              "nothing usable (default 3; 0: never stop)")
    _add_common(explore)
    _add_role_backend(explore, "explorer")

    apply = sub.add_parser("apply", help="run a discovered visual prompt on a test set")
    apply.add_argument("source", type=Path, help="a run folder (its best node) or a prompt folder")
    apply.add_argument("--dataset", type=Path, required=True, help="test dataset")
    apply.add_argument("--format", help="dataset format (default: detected)")
    add_dataset_args(apply)
    apply.add_argument("--task", help="task name (default: the run's)")
    apply.add_argument("--node", type=int, help="apply this node of the run instead of the best")
    apply.add_argument("--include-dev", action="store_true",
                       help="keep the run's development samples in the test set (default: left out)")
    apply.add_argument("--out", type=Path, help="results JSONL (default: SOURCE/apply-<dataset>-<hash>.jsonl, the "
                                                "hash of the dataset's full path, --split and --node)")
    _add_common(apply, limit=True)

    show = sub.add_parser("show", help="write an HTML view of a run's tree and accuracy curve")
    show.add_argument("run", type=Path)
    show.add_argument("--out", type=Path, help="HTML file (default RUN/report.html)")
    show.add_argument("--with", dest="others", type=Path, nargs="+", metavar="RUN",
                      help="other runs of the same task: adds their mean best-accuracy curve (the paper's Figure 5 "
                           "averages five runs)")


def _seconds(raw: str) -> float:
    """A positive number of seconds: a zero timeout would fail every program."""
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {raw!r}")
    return value


def _without_dev(samples: list, dev_ids: list[str], include_dev: bool, dev_content: dict[str, str] | None = None
                 ) -> list:
    """The test set without the samples the prompt was discovered on, unless --include-dev; says how many left.

    A sample is a development sample when its id and, where the run recorded it, its content (images, question,
    options: `datasets.content`) match; one that only shares an id is another item and stays, said in one line."""
    if include_dev or not dev_ids:
        return samples
    dev = set(dev_ids)
    content = sample_digests([s for s in samples if s.id in dev], label=False) if dev_content else {}
    other = [s.id for s in samples if s.id in content and dev_content.get(s.id) != content[s.id]]
    kept = [s for s in samples if s.id not in dev or s.id in other]
    if len(kept) < len(samples):
        print(f"left out {len(samples) - len(kept)} development samples of the run (--include-dev keeps them)",
              file=sys.stderr)
    if other:
        print(f"kept {len(other)} samples that share an id with a development sample but hold other images, "
              f"question or options ({', '.join(other[:5])})", file=sys.stderr)
    if not kept:
        raise ValueError("--dataset: every sample is a development sample of the run; pass --include-dev to "
                         "apply the prompt to them anyway")
    return kept


def _add_common(parser: argparse.ArgumentParser, limit: bool = False) -> None:
    _add_role_backend(parser, "target")
    presets.add_preset_arg(parser, "sevex")
    add_shared_option(parser, named(BACKEND, "max-retries"), tuple(DEFAULT_BACKENDS),
                      help="retries on rate limits of every model (default 4; --ROLE-max-retries sets one role's)")
    add_run_args(parser, limit)
    parser.add_argument("--timeout", type=_seconds, default=120, help="wall seconds per program (default 120)")
    parser.add_argument("--sandbox", choices=sandbox_names(), default="auto",
                        help="where generated code runs: auto/bwrap = bubblewrap OS sandbox (refuses to run when it "
                             "is unavailable); none = no isolation, trusted code only")
    add_executor_args(parser, "the target model evaluates candidates",
                      "its own target client, tool server and sandbox")
    add_server_args(parser)


def _load(path: Path, fmt: str | None, images_root: str | Path | None = None, split: str | None = None,
          images_anywhere: bool = False) -> tuple[list, str]:
    """The dataset's samples and the line that counts them (said once every check has passed); unlabelled ones
    (e.g. BLINK test rows) are counted here and dropped by the task."""
    from ..datasets import load_dataset

    dataset = load_dataset(path, format=fmt, images_root=images_root, split=split, images_anywhere=images_anywhere)
    return list(dataset), f"{len(dataset)} samples from {path} ({dataset.format}){describe_counts(dataset)}"


def _sandbox(args: argparse.Namespace, isolation, counted: str) -> Sandbox:
    """The run's sandbox, once nothing is left to refuse, saying on stderr what the run is about to use: the
    sandbox's bounds, the samples."""
    limits = SandboxLimits(wall_seconds=args.timeout)
    print(f"sevex: {isolation.bounds(limits)}", file=sys.stderr)
    print(counted, file=sys.stderr)
    return Sandbox(limits, warm=min(args.concurrency, 4), isolation=isolation)


async def _close(*backends) -> None:
    """Close the SDK clients inside the event loop that used them (not later, from the garbage collector)."""
    for backend in backends:
        if hasattr(backend, "aclose"):
            await backend.aclose()


def _same_dev(samples: list, ids: list[str], content: dict[str, str] | None = None) -> list:
    """On --resume, exactly the dev samples the run started with, in their order, with the same content."""
    by_id = {s.id: s for s in samples}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise ValueError(f"--resume: the dev dataset no longer holds the run's samples {', '.join(missing[:5])}")
    dev = [by_id[i] for i in ids]
    changed = [i for i, d in sample_digests(dev, label=False).items() if (content or {}).get(i, d) != d]
    if changed:
        raise ValueError(f"--resume: the run's dev samples {', '.join(changed[:5])} hold other images, question or "
                         "options now; start a new run with another --out")
    return dev


async def _explore(args: argparse.Namespace) -> int:
    isolation = choose_sandbox(args.sandbox)  # refuse before anything is started or written
    run_file = args.out / "run.json"
    if args.resume and run_file.exists():
        run = read_json(run_file)
        if args.task is not None and args.task != run["task"]:
            raise exit_with(f"sevex: --task {args.task}: {args.out} is a {run['task']} run; --resume keeps its "
                             "task (drop --task, or start a new run in another --out)")
        for role in DEFAULT_BACKENDS:  # a role not named again keeps the run's backend and model
            if getattr(args, f"{role}_backend") is None:
                setattr(args, f"{role}_backend", run[role]["backend"])
                setattr(args, f"{role}_model", getattr(args, f"{role}_model") or run[role]["model"])
    else:
        if args.dev is None or args.task is None:
            raise exit_with(f"sevex: {args.out} holds no run to resume; --task and --dev start a new one"
                             if args.resume else "sevex: --task and --dev are required for a new run")
        for role, default in DEFAULT_BACKENDS.items():
            setattr(args, f"{role}_backend", getattr(args, f"{role}_backend") or default)
        iterations = DEFAULT_ITERATIONS if args.iterations is None else args.iterations
        config = ExploreConfig(iterations=iterations, k=args.k, strategy=args.strategy,
                               nuct=NUCTParams(args.lambda_expl, args.lambda_novel, args.lambda_sat, args.gain_scale),
                               tree=not args.no_tree, backprop=not args.no_backprop, abstract=not args.no_abstract,
                               repeats=args.repeats, max_unusable=args.max_unusable)
        run = {"task": args.task, "task_description": args.task_description, "dev": str(args.dev),
               "format": args.format, "images_root": str(args.images_root) if args.images_root else None,
               "images_anywhere": args.images_anywhere, "split": args.split, "dev_size": args.dev_size,
               "seed": args.seed, "strategy": args.strategy,
               "config": config.to_json()}
    for role in DEFAULT_BACKENDS:  # the models this session really uses
        run[role] = {"backend": getattr(args, f"{role}_backend"), "model": getattr(args, f"{role}_model"),
                     "service_tier": getattr(args, f"{role}_service_tier", None) or "standard"}
    config = ExploreConfig.from_json(run["config"])
    config.iterations = config.iterations if args.iterations is None else args.iterations
    run["config"] = config.to_json()
    task = get_task(run["task"], run.get("task_description"))
    loaded, counted = _load(Path(run["dev"]), run["format"], run.get("images_root"), run.get("split"),
                            run.get("images_anywhere") or args.images_anywhere)
    samples = task.samples(loaded)
    dev = (_same_dev(samples, run["dev_ids"], run.get("dev_content")) if args.resume and run.get("dev_ids")
           else choose_dev(samples, run["dev_size"], run["seed"]))
    run["dev_ids"] = [s.id for s in dev]
    run["dev_content"] = sample_digests(dev, label=False)  # apply leaves out these items, not just these ids
    if (args.out / "state.json").exists() and not args.resume:
        raise exit_with(f"sevex: {args.out} already holds a run; pass --resume to continue it")
    # everything is checked before anything is written: the keys, the preset, the tool server's tags
    explorer = _backend(args, "explorer") if uses_explorer(choose_strategy(config.strategy), config) else None
    if explorer is None:  # a baseline measured once: no explorer, no key for one (recorded as none)
        run["explorer"] = {"backend": None, "model": None, "service_tier": None}
    target = _backend(args, "target")
    if args.chosen:  # --preset paper: what each role will send, against the paper, said once and kept in run.json
        args.chosen.check(presets.planned(target), "sevex", "target")
        if explorer is not None:
            args.chosen.check(presets.planned(explorer), "sevex", "explorer")
        run["preset"] = args.chosen.record()
    sandbox = _sandbox(args, isolation, counted)  # a refusal above is its one line; what is about to run is said here
    async with toolclient_from_args(args) as tools:
        runner = await Runner.create(tools, target, task, sandbox, args.concurrency,
                                     _distributed(args, run["task"], run.get("task_description")))
        args.out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(run_file, run, indent=1)
        target_name = f"{args.target_backend}:{args.target_model or 'default'}"
        roles = Roles(explorer, target_name)  # type: ignore[arg-type]  # explorer None: never asked
        try:
            best = await Explorer(args.out, runner, roles, dev, config, progress=not args.no_progress).run(
                resume=args.resume)
        except RunExists as exc:
            raise exit_with(f"sevex: {exc}", FAILED) from None
        finally:
            await sandbox.close()
            await _close(explorer, target)
    resolve(args.out).save(RunFolder(args.out) / "best")
    print(f"best dev accuracy {best.reward:.3f} (node {best.id}: {best.idea})")
    print(f"visual prompt saved in {args.out / 'best'}; view the run with: sevex show {args.out}")
    return OK


async def _apply(args: argparse.Namespace) -> int:
    isolation = choose_sandbox(args.sandbox)
    prompt = resolve(args.source, args.node)
    task = get_task(args.task or prompt.meta.get("task") or "probes", prompt.meta.get("task_description"))
    loaded, counted = _load(args.dataset, args.format, args.images_root, args.split, args.images_anywhere)
    samples = task.samples(loaded)
    target = _backend(args, "target")
    if args.chosen:
        args.chosen.check(presets.planned(target), "sevex", "target")
    samples = _without_dev(samples, prompt.meta.get("dev_ids") or [], args.include_dev,
                           prompt.meta.get("dev_content"))[: args.limit]
    sandbox = _sandbox(args, isolation, counted)  # after the last refusal (every sample a development one), as explore
    async with toolclient_from_args(args) as tools:
        runner = await Runner.create(tools, target, task, sandbox, args.concurrency,
                                     _distributed(args, task.name, prompt.meta.get("task_description")))
        try:
            evaluated = (await runner.evaluate(prompt.implementation, samples) if prompt.implementation
                         else await runner.evaluate_agentic(samples))
        finally:
            await sandbox.close()
            await _close(target)
    out = args.out or args.source / apply_name(args.dataset, args.split, args.node)
    results = [e.result for e in evaluated]
    write_results(RunFolder(out.parent), out.name, results)
    if args.chosen:  # the preset and every difference said, beside the results they qualify
        write_json_atomic(preset_file(out), args.chosen.record())
    else:  # an earlier --preset apply's record would describe these results wrongly
        preset_file(out).unlink(missing_ok=True)
    usage = sum((r.usage for r in results), Usage())
    tokens = usage.total / max(len(results), 1)
    dollars = cost(usage, target.model, parse_prices(None, getattr(args, "target_service_tier", None)))
    print(f"accuracy {dev_accuracy(results):.3f} on {len(results)} samples; {tokens:,.0f} tokens per sample; "
          f"{'cost unknown' if dollars is None else f'${dollars:.4f} in all'}; results in {out}"
          + (f" (preset: {preset_file(out)})" if args.chosen else ""))
    return OK


@entry_point
def main(argv: list[str] | None = None) -> int:
    args = parse(build_parser(), argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return execute(args)


def execute(args: argparse.Namespace) -> int:
    """Run the parsed subcommand; `args.argv` holds the words after the command (read again by `--preset`)."""
    args.chosen = presets.from_args(args, build_parser, "sevex", args.argv)
    if args.command == "show":
        if not (args.run / "tree.json").exists():
            raise exit_with(f"sevex: {args.run} holds no run (tree.json missing)")
        out = args.out or args.run / "report.html"
        if not out.parent.is_dir():
            raise exit_with(f"sevex: --out {out}: no folder {out.parent}")
        try:
            write_atomic(out, render(args.run, args.others))
        except FileNotFoundError as exc:
            raise exit_with(f"sevex: {exc}") from None
        print(f"wrote {out}")
        return OK
    try:
        return run_stoppable(_explore(args) if args.command == "explore" else _apply(args))
    except (ValueError, FileNotFoundError, PluginError, SandboxUnavailable) as exc:  # PluginError: unknown --tools tag
        print(f"sevex: {exc}", file=sys.stderr)
        return USAGE
    except (BackendError, ExecutorFailed) as exc:  # no quota or key, a dead worker: stopping beats scoring 0
        print(f"sevex: {' '.join(str(exc).split())}{_resume_hint(args)}", file=sys.stderr)
        return FAILED
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: one line and how to go on, no tracebacks
        print(f"sevex: interrupted{_resume_hint(args)}", file=sys.stderr)
        return exit_status(exc)


def preset_file(results: Path) -> Path:
    """'apply-probes-1a2b3c4d.preset.json' beside 'apply-probes-1a2b3c4d.jsonl': results lines stay one per sample."""
    return results.with_suffix(".preset.json")


def apply_name(dataset: Path, split: str | None, node: int | None) -> str:
    """'apply-probes-1a2b3c4d.jsonl': the dataset's name and a hash of its full path, split and node, so two test
    sets that are both called probes.jsonl never overwrite each other's results."""
    key = json.dumps([str(dataset.resolve()), split, node])
    return f"apply-{dataset.stem}-{hashlib.sha256(key.encode()).hexdigest()[:8]}.jsonl"


def _resume_hint(args: argparse.Namespace) -> str:
    if args.command != "explore":
        return ""
    return f"; the run is checkpointed, continue it with: sevex explore --out {args.out} --resume"


if __name__ == "__main__":
    sys.exit(main())
