"""The modules a program may import work in the sandbox whatever they import for themselves.

The import system cannot load a module once the filter is on (it lists folders and maps code, both off the list),
so whatever an allowed module imports inside its functions must be loaded before: read from the modules' own
source, so a Python whose standard library imports something new fails here, not in a user's run.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys

from trompe_agents.sevex import sandbox_child
from trompe_agents.sevex.isolation.base import SEVEX


def imported_in_functions(module: str) -> set[str]:
    """The absolute names `module` imports inside its functions (run when called, not when it is loaded)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not (spec.origin or "").endswith(".py"):
        return set()  # built into the interpreter or a shared library: imports nothing by name
    package = module if spec.submodule_search_locations else module.rpartition(".")[0]
    found = set()
    for function in ast.walk(ast.parse(open(spec.origin).read())):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    base = package.rsplit(".", node.level - 1)[0] if node.level else ""
                    found.add(".".join(part for part in (base, node.module) if part))
    return found


def test_what_allowed_modules_import_in_their_functions_is_loaded_before_the_program():
    loaded = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {str(SEVEX)!r}); "
                             "import sandbox_child; print(' '.join(sys.modules))"],
                            capture_output=True, text=True, check=True, timeout=60).stdout.split()
    needed = {name for module in sandbox_child.ALLOWED_MODULES for name in imported_in_functions(module)}
    assert "heapq" in needed  # collections.Counter.most_common's
    assert needed - set(loaded) == set()


def _source_modules_loaded(code: str) -> set[str]:
    """The modules written in Python (not built in, not a shared library) that `python -I -S -c code` loads."""
    report = ("import sys; print(' '.join(name for name, module in sys.modules.items() "
              "if str(getattr(module, '__file__', '')).endswith('.py')))")
    return set(subprocess.run([sys.executable, "-I", "-S", "-c", f"{code}; {report}"], capture_output=True, text=True,
                              check=True, timeout=60).stdout.split())


def test_the_launcher_loads_no_python_module_beyond_what_os_needs():
    """Every sandbox starts an interpreter for the launcher: json, contextlib, the ctypes and signal packages
    (enum, re, functools, collections) would more than double its CPU (bench/README.md, issue 42's overhead)."""
    launcher = _source_modules_loaded(f"import sys; sys.path.insert(0, {str(SEVEX / 'isolation')!r}); import launcher")
    assert launcher - {"launcher"} <= _source_modules_loaded("import os")
