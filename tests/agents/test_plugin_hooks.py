"""One plugin namespace: dataset formats, scorers, executors, sandboxes, probe families and `trompe` subcommands
are registered through hooks as backends are, the built-ins included, and a name two plugins register is refused
naming both.

A third-party distribution is installed the way pip lays one out (distkit) on sys.path.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from distkit import install_module
from trompe_kernel import hookimpl
from trompe_kernel.errors import PluginConflict
from trompe_kernel.manager import default_plugins

from trompe_agents.cli import build_parser as trompe_parser, main as trompe_main
from trompe_agents.datasets import ListDataset, Sample, load_dataset
from trompe_agents.datasets.load import dataset_formats
from trompe_agents.datasets.scorers import Score, registered_scorers, scorers_for
from trompe_agents.executors import create_executor, executor_names
from trompe_agents.illusion import cli as illusion_cli
from trompe_agents.probes import list_families
from trompe_agents.probes.base import Family
from trompe_agents.sevex import cli as sevex_cli
from trompe_agents.sevex.isolation import choose, sandbox_names
from trompe_agents.sevex.isolation.none import NoIsolation


def register_in_process(**hooks) -> None:
    """A plugin named 'twin' implementing the given hooks (hook name -> the names it registers)."""
    plugin = type("Twin", (), {})()
    for hook, names in hooks.items():
        def implementation(register, names=names):
            for name, thing in names.items():
                register(name, thing)

        setattr(plugin, hook, hookimpl(implementation))
    default_plugins().register(plugin, name="twin")


class Trusting(NoIsolation):
    """A sandbox plugin's isolation (here: none, for the test)."""

    name = "trusting"


class Unavailable(NoIsolation):
    def unavailable(self) -> str | None:
        return "no such kernel feature here"


def one_line_format(path: Path, images_root: Path | None, split: str | None) -> ListDataset:
    """A plugin's dataset format: one question per line of a text file."""
    lines = path.read_text().splitlines()
    return ListDataset(path.stem, [Sample(id=str(i), images=[], question=q) for i, q in enumerate(lines)])


def add_hello(subparsers) -> None:
    """A plugin's `trompe hello` subcommand."""
    hello = subparsers.add_parser("hello", help="say hello")
    hello.add_argument("--status", type=int, default=0)
    hello.set_defaults(func=lambda args: args.status)


def a_family(name: str) -> Family:
    return Family(name, "blindtest", "Counting", "a plugin's family", lambda rng, size, cf, m: None)


@pytest.mark.parametrize("hook, taken, what, built_in, lookup", [
    ("register_dataset_formats", "blink", "dataset format", "datasets", dataset_formats),
    ("register_scorers", ("blink", "official"), "scorer", "scorers", registered_scorers),
    ("register_executors", "ray", "executor", "executors", executor_names),
    ("register_commands", "probes", "command", "commands", trompe_parser),
    ("register_sandboxes", "none", "sandbox", "sandboxes", sandbox_names),
    ("register_probe_families", "line_intersections", "probe family", "probes", list_families),
])
def test_a_plugin_taking_a_built_in_name_is_refused_naming_both(fresh_plugins, hook, taken, what, built_in, lookup):
    register_in_process(**{hook: {taken: object()}})
    with pytest.raises(PluginConflict) as refused:
        lookup()
    assert str(refused.value) == (f"{what} {taken!r} is registered by both plugin {built_in!r} and plugin 'twin'; "
                                  "leave one out with the TROMPE_PLUGINS environment variable, or uninstall its "
                                  "distribution (pip uninstall NAME)")


def test_plugin_registrations_are_offered_beside_the_built_ins(fresh_plugins, tmp_path):
    register_in_process(register_dataset_formats={"lines": one_line_format},
                        register_scorers={("blink", "strict"): lambda records: Score("strict", "exact match")},
                        register_executors={"inline": lambda spec, **how: (spec, how)},
                        register_commands={"hello": add_hello},
                        register_sandboxes={"trusting": Trusting, "broken": Unavailable},
                        register_probe_families={"plugin_family": a_family("plugin_family")})
    assert executor_names() == ["inline", "local", "ray"]
    assert scorers_for("blink") == ["official", "lmms-eval", "strict", "vlmevalkit"]
    report = illusion_cli.build_parser().parse_args(["report", "run", "--scorer", "strict"])
    assert report.scorer == "strict"
    questions = tmp_path / "questions.txt"
    questions.write_text("Is it?\nIs it not?\n")
    assert [s.question for s in load_dataset(questions, format="lines")] == ["Is it?", "Is it not?"]
    assert trompe_main(["dataset", "info", str(questions), "--format", "lines"]) == 0
    # a plugin's executor is made with the job and every setting as given, and create_executor's defaults
    assert create_executor("inline", "job", workers=3, concurrency=7, ray_address="ray://head:10001") == (
        "job", {"workers": 3, "concurrency": 7, "address": "ray://head:10001"})
    assert create_executor("inline", "job") == ("job", {"workers": 1, "concurrency": 4, "address": None})
    assert sandbox_names() == ["auto", "broken", "bwrap", "none", "trusting"]
    assert isinstance(choose("trusting"), Trusting)
    with pytest.raises(Exception, match="without an OS sandbox: no such kernel feature here"):
        choose("broken")  # a plugin's sandbox that cannot run here is refused as bubblewrap's absence is
    assert "plugin_family" in {f.name for f in list_families("blindtest")}
    assert trompe_main(["hello", "--status", "3"]) == 3  # a plugin's subcommand, its exit status kept
    explore = sevex_cli.build_parser().parse_args(["explore", "--out", "o", "--executor", "inline",
                                                   "--sandbox", "trusting"])
    assert (explore.executor, explore.sandbox) == ("inline", "trusting")  # the command lines offer them


def test_an_installed_plugin_may_implement_any_hook_and_is_held_to_the_same_rule(fresh_plugins):
    install_module(fresh_plugins, "acme-exec", "acme", "from trompe_kernel import hookimpl\n\n\n@hookimpl\n"
                   "def register_executors(register):\n    register('local', lambda spec, **how: None)\n")
    with pytest.raises(PluginConflict, match="executor 'local' is registered by both plugin 'acme' and plugin "
                                             "'executors'"):
        create_executor("local", None)
