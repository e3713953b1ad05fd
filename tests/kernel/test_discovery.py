"""One hook namespace, one entry-point group, one manager: the built-ins arrive through BUILTINS, third-party plugins
through the group `trompe`, and a package written for the two old groups still loads with one deprecation line."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from distkit import env_with, install_module
from PIL import Image
from trompe_kernel import hookspecs
from trompe_kernel.builtins import BUILTINS
from trompe_kernel.errors import PluginConflict, PluginError
from trompe_kernel.manager import Plugins
from trompe_kernel.registry import PluginRegistry

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("servers", "plugins", "agents", "prompts", "inspectai")
OLD_TOOL = '''from trompe_server import ToolContext, ToolOutput, hookimpl


def old_invert(ctx: ToolContext, image: str) -> ToolOutput:
    """Invert the colours (a plugin written for the trompe.tools group)."""
    return ToolOutput("inverted", ctx.image(image).point(lambda v: 255 - v))


@hookimpl
def register_tools(register):
    register(old_invert, tags=("old",))
'''
OLD_BACKEND = '''import json

from trompe_agents.hookspecs import hookimpl
from trompe_agents.messages import Message, TextPart, Turn, Usage


class AlwaysNo:
    name = "always-no"

    def __init__(self, options):
        self.model = "no-1"

    async def complete(self, messages, tools, *, final_schema=None, max_output_tokens=4096):
        reply = json.dumps({"reasons": "", "answer": "no"})
        return Turn(Message("assistant", [TextPart(reply)]), Usage(), self.model, "end_turn")


@hookimpl
def register_backends(register):
    register("always-no", AlwaysNo)
'''


def deprecation(plugin: str, distribution: str, group: str) -> str:
    return (f"trompe: plugin {plugin!r} of {distribution} is in the deprecated entry-point group {group!r}; it still "
            "loads, but its package should name it in [project.entry-points.trompe]")


def run(site: Path, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), env=env_with(site), cwd=cwd, capture_output=True, text=True, timeout=280)


@pytest.mark.slow
def test_plugins_of_the_old_groups_still_load_each_with_one_deprecation_line(tmp_path):
    site = install_module(tmp_path / "site", "old-tools", "oldtools", OLD_TOOL, group="trompe.tools")
    install_module(site, "old-models", "oldmodels", OLD_BACKEND, group="trompe.backends")
    listed = run(site, "trompe-server", "--list-tools", "--tools", "old")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[:3] == ["old_invert", "oldtools", "old"]
    assert listed.stderr.splitlines().count(deprecation("oldtools", "old-tools", "trompe.tools")) == 1
    assert listed.stderr.splitlines().count(deprecation("oldmodels", "old-models", "trompe.backends")) == 1

    Image.new("RGB", (8, 8)).save(tmp_path / "q.png")
    asked = run(site, "illusion-agent", "ask", "--backend", "always-no", "q.png", "Equal?", cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr  # the agent and its in-process server load both, said once each
    assert "answer: no" in asked.stdout
    assert sorted(line for line in asked.stderr.splitlines() if "deprecated" in line) == [
        deprecation("oldmodels", "old-models", "trompe.backends"), deprecation("oldtools", "old-tools",
                                                                               "trompe.tools")]


def test_a_plugin_named_in_the_new_and_an_old_group_loads_once_without_the_deprecation_line(tmp_path, monkeypatch,
                                                                                          capsys):
    site = install_module(tmp_path / "site", "moved-models", "moved", OLD_BACKEND)
    info = next(site.glob("*.dist-info"))
    text = (info / "entry_points.txt").read_text()
    (info / "entry_points.txt").write_text(text + "\n" + text.replace("[trompe]", "[trompe.backends]"))
    monkeypatch.syspath_prepend(str(site))
    plugins = Plugins()
    assert list(plugins.registry("register_backends", "backend", lambda factory: factory, only="moved")) == \
        ["always-no"]
    assert "deprecated" not in capsys.readouterr().err


def test_a_name_registered_twice_is_refused_naming_both_plugins_and_one_remedy():
    registry = PluginRegistry("backend", "the TROMPE_PLUGINS environment variable")
    registry.add("claude", object(), "claude")
    with pytest.raises(PluginConflict) as refused:
        registry.add("claude", object(), "acme")
    assert str(refused.value) == ("backend 'claude' is registered by both plugin 'acme' and plugin 'claude'; leave one "
                                  "out with the TROMPE_PLUGINS environment variable, or uninstall its distribution "
                                  "(pip uninstall NAME)")
    assert list(registry) == ["claude"] and registry.of("claude") == ["claude"]


def _hook_implementations(module: object) -> list[str]:
    return sorted(name for name, value in vars(module).items() if hasattr(value, f"{hookspecs.PROJECT}_impl"))


@pytest.mark.parametrize("builtin", BUILTINS, ids=lambda builtin: builtin.name)
def test_each_built_in_implements_exactly_the_hooks_the_list_names(builtin):
    assert _hook_implementations(importlib.import_module(builtin.module)) == sorted(builtin.hooks)


def test_every_hook_has_a_built_in_and_every_built_in_a_name_of_its_own():
    specs = {name for name, value in vars(hookspecs).items() if hasattr(value, f"{hookspecs.PROJECT}_spec")}
    assert {hook for builtin in BUILTINS for hook in builtin.hooks} == specs
    assert len({builtin.name for builtin in BUILTINS}) == len(BUILTINS)


def _calls(name: str) -> list[str]:
    """Modules of the source tree that call `name` (a function or method), as dotted paths."""
    found = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                func = getattr(node, "func", None)
                if isinstance(node, ast.Call) and name in (getattr(func, "id", None), getattr(func, "attr", None)):
                    found.append(path.relative_to(ROOT / folder).with_suffix("").as_posix().replace("/", "."))
    return sorted(set(found))


@pytest.mark.parametrize(("call", "home"), [
    ("HookspecMarker", ["trompe_kernel.hookspecs"]),  # one namespace
    ("HookimplMarker", ["trompe_kernel.hookspecs"]),
    ("PluginManager", ["trompe_kernel.manager"]),  # one manager
    ("entry_points", ["trompe_kernel.manager"]),  # one group, read in one place
])
def test_one_namespace_one_manager_one_group(call, home):
    assert _calls(call) == home


def test_a_plugin_implementing_a_hook_trompe_does_not_have_is_skipped_naming_it_or_stops_when_strict(
        tmp_path, monkeypatch, capsys):
    source = "from trompe_kernel import hookimpl\n\n\n@hookimpl\ndef register_tool(register):\n    pass\n"
    monkeypatch.syspath_prepend(str(install_module(tmp_path / "site", "typo-tools", "typo", source)))
    loaded = {impl.plugin_name for impl in Plugins(strict=False).implementations("register_tools")}
    assert loaded == {"draw", "analysis", "vision"}  # the others load
    said = capsys.readouterr().err
    assert "trompe: skipping plugin 'typo' cannot be used: unknown hook 'register_tool'" in said
    assert "the hooks and their arguments are in trompe_kernel/hookspecs.py" in said
    with pytest.raises(PluginError, match="^plugin 'typo' cannot be used: unknown hook 'register_tool'"):
        Plugins(strict=True).implementations("register_tools")


def test_a_hook_imports_only_its_own_built_ins():
    """The server never imports the agents, and naming one backend imports no other vendor's SDK (a second each)."""
    probe = ("import sys\nfrom trompe_server.app import create_app\ncreate_app().registry.close()\n"
             "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('trompe_agents')}))\n"
             "from trompe_agents.plugins import backend_entry\nbackend_entry('function')\n"
             "print(sorted(m for m in ('anthropic', 'openai', 'google.genai', 'transformers') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", probe], env=env_with(), capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "[]"]
