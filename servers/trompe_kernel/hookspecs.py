"""Every hook a trompe plugin can implement, in one pluggy namespace (`trompe`): this file is the whole list.

Each hook is `register_<things>(register)`: the plugin calls `register` once per thing it adds. A name two plugins
register (a built-in's included) is refused naming both (registry.PluginRegistry). docs/plugins.md shows each hook
with a working example; manager.py finds the plugins (entry-point group `trompe`, builtins.BUILTINS, or in process).
"""

from pluggy import HookimplMarker, HookspecMarker

PROJECT = "trompe"  # the pluggy project name: the marker attribute a hook implementation carries
hookspec = HookspecMarker(PROJECT)
hookimpl = HookimplMarker(PROJECT)


# ---- the server: image tools and registry storages


@hookspec
def register_tools(register):
    """Register image tools: call register(fn, tags=(...), name=None, copies=2) once per tool.

    `copies` is how many full-size working copies (4 bytes a pixel) the tool holds at its peak for each image
    it reads: its input and its result make 2; a tool holding more declares it, so the memory budget counts it.
    """


@hookspec
def register_storages(register):
    """Register registry storages by URL scheme: call register(scheme, factory) where factory(url, limits) returns
    a `storage.Storage` for `--registry SCHEME://...` (a start-up problem is a ValueError naming the URL)."""


# ---- the agents: models, runs, datasets and commands


@hookspec
def register_backends(register):
    """Register model backends: call register(name, factory, settings=MySettings) where factory(BackendOptions)
    -> Backend and MySettings, a frozen dataclass of `backends.settings.setting` fields, is what
    `--backend-option` may set (omitted: none); the factory reads `MySettings.of(options)`."""


@hookspec
def register_executors(register):
    """Register executors: call register(name, factory) where factory(job, workers=, concurrency=, address=)
    returns an `executors.Executor`, or None for today's path (every sample in this process)."""


@hookspec
def register_sandboxes(register):
    """Register sandboxes for SEVEX's generated code: call register(name, factory) where factory() returns an
    `sevex.isolation.Isolation` (its `unavailable()` says why it cannot run here)."""


@hookspec
def register_strategies(register):
    """Register SEVEX search strategies: call register(name, factory) where factory() returns a
    `sevex.strategy.Strategy`; users pick it with `sevex explore --strategy NAME`."""


@hookspec
def register_probe_families(register):
    """Register probe families: call register(name, family) with a `probes.Family` (suite, maker, magnitudes)."""


@hookspec
def register_dataset_formats(register):
    """Register dataset formats: call register(name, loader) where loader(path, images_root, split) returns a
    `datasets.ListDataset`; users pick it with --format NAME."""


@hookspec
def register_benchmarks(register):
    """Register benchmarks: call register(name, benchmark) with a `datasets.benchmark.Benchmark` named `name`
    (loader, detection, answer form, evaluation split, scorers and judges per harness, SEVEX tasks, Inspect
    task); `--format NAME`, `--scorer`, `sevex explore --task` and `inspect eval trompe/TASK` then offer it."""


@hookspec
def register_scorers(register):
    """Register benchmark scorers: call register((format, name), scorer) where scorer(records) returns a
    `datasets.scorers.Score`; `--scorer NAME` picks it for runs of that format."""


@hookspec
def register_commands(register):
    """Register `trompe` subcommands: call register(name, add) where add(subparsers) adds the subcommand `name`
    (`subparsers.add_parser(name, ...)`, with `set_defaults(func=...)`: func(args) returns the exit status, and
    finds the words typed after `trompe` in `args.argv`)."""
