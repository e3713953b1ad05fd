"""The house's layering, read from the source with `ast`: no import cycle, and no module importing one above it.

Layers, low to high: the plugin kernel (trompe_kernel: version, exits, plugin errors, hooks, manager); the server
(trompe_server) and the prompt files (trompe_prompts); the tool plugins
(trompe_draw, trompe_analysis, trompe_vision), which may build on one another; the agents (trompe_agents); the
Inspect AI extension (trompe).
Inside the agents, the applications (illusion, sevex, probes) and the test doubles (testing) stand on the
library (backends, datasets, executors, the loop, ...), which imports none of them, and the applications do not
import one another; command-line modules (cli, cliopts, cliargs) are imported only by other command-line modules.
Every import counts, wherever it is written: inside a function, under `if TYPE_CHECKING:` (a cycle a type
checker walks is a cycle a reader walks), and the package `__init__` an import from another package runs.
Folders are checked as well as files: seen from the files and folders beside it, a folder is one unit, so
`backends/` importing `model_images.py` while `model_images.py` imports `backends/` is a loop even when no two
files close it. A folder's files may build on the files of the folder above (`backends/` on `messages.py`) as long
as none of those files imports the folder back. The layers are named by folder (package and area), so the layer
check on files is the layer check on folders.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
FOLDERS = ("servers", "plugins", "agents", "prompts", "inspectai")
LAYER = {"trompe_kernel": 0, "trompe_server": 1, "trompe_prompts": 1, "trompe_draw": 2, "trompe_analysis": 2,
         "trompe_vision": 2, "trompe_agents": 3, "trompe": 4}  # trompe: the Inspect AI extension, on the agents
APPLICATIONS = ("illusion", "sevex", "probes", "testing")  # areas of trompe_agents that the library never imports
COMMANDS = ("cli", "cliopts", "cliargs")  # module names of the command line


def find_modules(root: Path, folders: tuple[str, ...] = FOLDERS) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the folders (a folder's packages sit inside it)."""
    found = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def imported(name: str, modules: dict[str, Path]) -> set[str]:
    """The modules of `modules` that importing `name` runs directly, package `__init__`s included."""
    path = modules[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets += [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
    own = set(_ancestors(name))  # the packages `name` sits in are being imported already when it runs
    found = set()
    for target in targets:
        found.update(a for a in _ancestors(target) if a in modules and a not in own)
    return found


def import_graph(root: Path = ROOT, folders: tuple[str, ...] = FOLDERS) -> dict[str, set[str]]:
    modules = find_modules(root, folders)
    return {name: imported(name, modules) for name in modules}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import one another (directly or through others), as one closed path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while (top := stack.pop()) != node:
                group.append(top)
            if group:
                groups.append(_path({node, *group}, graph))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def _path(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A closed import path through a cycle group, from its first module back to it (for the message)."""
    start = min(group)
    paths = [[start]]
    while paths:
        path = paths.pop(0)
        for nxt in sorted(graph[path[-1]] & group):
            if nxt == start:
                return [*path, start]
            if nxt not in path:
                paths.append([*path, nxt])
    return sorted(group)


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph with each folder seen from its neighbours as one unit.

    An import from `p.a.x` to `p.b.y` is an arrow between the two entries of `p` that hold them (`p.a` -> `p.b`,
    each a file or a folder); a package's `__init__` stands for its folder. Arrows inside one entry are left to
    that entry's own level.
    """
    folders: dict[str, set[str]] = {}
    for name, targets in graph.items():
        for target in targets:
            a, b = name.split("."), target.split(".")
            common = 0
            while common < min(len(a), len(b)) and a[common] == b[common]:
                common += 1
            source, dest = ".".join(a[: common + 1]), ".".join(b[: common + 1])
            folders.setdefault(source, set())
            folders.setdefault(dest, set())
            if source != dest:
                folders[source].add(dest)
    return folders


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Imports that reach above the importer's layer, as 'importer -> imported: why'."""
    found = []
    for name, targets in sorted(graph.items()):
        top = name.split(".")[0]
        area = name.split(".")[1] if top == "trompe_agents" and "." in name else None
        for target in sorted(targets):
            target_top = target.split(".")[0]
            if top not in LAYER or target_top not in LAYER:
                found.append(f"{name} -> {target}: a package in no layer; give it one in tests/test_imports.py")
            elif LAYER[target_top] > LAYER[top]:
                found.append(f"{name} -> {target}: {top} sits below {target_top}")
            if top != "trompe_agents" or target_top != "trompe_agents" or "." not in target:
                continue
            target_area = target.split(".")[1]
            command = name.rpartition(".")[2] in COMMANDS
            if target.rpartition(".")[2] in COMMANDS and not command:
                found.append(f"{name} -> {target}: only command-line modules import the command line")
            if target_area in APPLICATIONS and target_area != area and not command:
                found.append(f"{name} -> {target}: the {target_area} application is imported by its own modules "
                             "and the command line only")
    return found


def test_no_module_imports_itself_through_others():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(path) for path in found)


def test_no_folder_imports_itself_through_others():
    found = cycles(folder_graph(import_graph()))
    assert not found, "folder import cycles:\n" + "\n".join(" -> ".join(path) for path in found)


def test_no_module_imports_one_above_its_layer():
    found = upward(import_graph())
    assert not found, "upward imports:\n" + "\n".join(found)


def test_every_package_is_walked():
    modules = find_modules(ROOT)
    assert {name.split(".")[0] for name in modules} == set(LAYER)
    assert {"trompe_kernel.manager", "trompe_server.storage", "trompe_agents.illusion.runner",
            "trompe_draw"} <= set(modules)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize(("files", "cycle"), [
    ({"a/pkg/__init__.py": "", "a/pkg/one.py": "from .two import x\n",
      "a/pkg/two.py": "def f():\n    from . import one\n"}, ["pkg.one", "pkg.two", "pkg.one"]),
    ({"a/pkg/__init__.py": "", "a/pkg/one.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
      "    from pkg.two import T\n", "a/pkg/two.py": "import pkg.one\n"}, ["pkg.one", "pkg.two", "pkg.one"]),
    ({"a/p/__init__.py": "from .inner import y\n", "a/p/inner.py": "from q.mod import z\n",
      "a/q/__init__.py": "", "a/q/mod.py": "from p.inner import y\n"}, ["p", "p.inner", "q.mod", "p"]),
    ({"a/p/__init__.py": "from .other import w\n", "a/p/inner.py": "", "a/p/other.py": "from q import mod\n",
      "a/q/__init__.py": "", "a/q/mod.py": "from p.inner import y\n"},  # importing p.inner runs p/__init__ first
     ["p", "p.other", "q.mod", "p"]),
], ids=["lazy", "type-checking", "package-init", "through-init"])
def test_the_walk_sees_lazy_type_checking_and_package_imports(tmp_path, files, cycle):
    write(tmp_path, files)
    assert cycles(import_graph(tmp_path, ("a",))) == [cycle]


def test_a_package_importing_its_own_modules_is_not_a_cycle(tmp_path):
    write(tmp_path, {"a/pkg/__init__.py": "from .one import x\n", "a/pkg/one.py": "from .base import b\n",
                     "a/pkg/base.py": "from pkg import helpers\n", "a/pkg/helpers.py": ""})
    assert cycles(import_graph(tmp_path, ("a",))) == []


@pytest.mark.parametrize(("files", "folder_cycles", "file_cycles"), [
    ({"a/pkg/__init__.py": "", "a/pkg/images.py": "from pkg.backends.catalogue import LIMITS\n",
      "a/pkg/backends/__init__.py": "", "a/pkg/backends/catalogue.py": "",
      "a/pkg/backends/claude.py": "from pkg.images import prepare\n"},
     [["pkg.backends", "pkg.images", "pkg.backends"]], []),
    ({"a/pkg/__init__.py": "", "a/pkg/messages.py": "", "a/pkg/loop.py": "from pkg.backends import claude\n",
      "a/pkg/backends/__init__.py": "", "a/pkg/backends/claude.py": "from pkg.messages import Message\n"}, [], []),
    ({"a/pkg/__init__.py": "", "a/pkg/sub/__init__.py": "", "a/pkg/sub/one.py": "from pkg.sub.two import x\n",
      "a/pkg/sub/two.py": "from pkg.sub import one\n"},
     [["pkg.sub.one", "pkg.sub.two", "pkg.sub.one"]], [["pkg.sub.one", "pkg.sub.two", "pkg.sub.one"]]),
], ids=["file-and-folder", "folder-on-base-file", "inside-one-folder"])
def test_a_folder_loop_is_found_where_no_files_close_one(tmp_path, files, folder_cycles, file_cycles):
    write(tmp_path, files)
    graph = import_graph(tmp_path, ("a",))
    assert (cycles(folder_graph(graph)), cycles(graph)) == (folder_cycles, file_cycles)


def test_an_upward_import_is_named():
    graph = {"trompe_server.app": {"trompe_agents.loop"}, "trompe_draw": {"trompe_agents"},
             "trompe_agents.loop": {"trompe_agents.illusion.runner", "trompe_agents.cliopts"},
             "trompe_agents.illusion.cli": {"trompe_agents.sevex.cli"},
             "trompe_agents.illusion.runner": {"trompe_agents.sevex.evaluate"},
             "trompe_agents.sevex.evaluate": {"trompe_agents.sevex.tasks"}}
    assert upward(graph) == [
        "trompe_agents.illusion.runner -> trompe_agents.sevex.evaluate: the sevex application is imported by its "
        "own modules and the command line only",
        "trompe_agents.loop -> trompe_agents.cliopts: only command-line modules import the command line",
        "trompe_agents.loop -> trompe_agents.illusion.runner: the illusion application is imported by its own "
        "modules and the command line only",
        "trompe_draw -> trompe_agents: trompe_draw sits below trompe_agents",
        "trompe_server.app -> trompe_agents.loop: trompe_server sits below trompe_agents"]
