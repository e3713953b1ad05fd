"""docs/plugins.md has a whole plugin module for every hook, and each works installed as a user installs it.

Each example is written out as a distribution (distkit: a package beside its *.dist-info/entry_points.txt in the
group `trompe`), found by importlib.metadata on PYTHONPATH, and the shell lines the page gives after it run the real
commands in a fresh process.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from distkit import env_with, install_module
from trompe_kernel import hookspecs

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
EXAMPLE = re.compile(r"<!-- plugin (\w+) -->\n`(\w+)/__init__\.py`:\n\n```python\n(.*?)```\n\n```bash\n(.*?)\n```",
                     re.S)
HOOKS = sorted(name for name, spec in vars(hookspecs).items() if hasattr(spec, f"{hookspecs.PROJECT}_spec"))


def examples() -> dict[str, tuple[str, str, str]]:
    """hook -> (module name, module source, shell lines), in page order."""
    found = {}
    for hook, module, source, shell in EXAMPLE.findall(DOC.read_text(encoding="utf-8")):
        assert hook not in found, f"two examples of {hook}"
        found[hook] = (module, source, shell)
    return found


def test_every_hook_has_one_example_and_a_row_in_the_table():
    assert sorted(examples()) == HOOKS
    text = DOC.read_text(encoding="utf-8")
    assert all(f"| `{hook}` |" in text for hook in HOOKS)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """Every example installed, each as a distribution of its own named after its module."""
    site = tmp_path_factory.mktemp("site")
    for module, source, _shell in examples().values():
        plugin = module.removeprefix("trompe_")
        install_module(site, f"example-{plugin}", plugin, source, module=module)
    return site


@pytest.mark.slow
@pytest.mark.parametrize("hook", HOOKS)
def test_the_example_works_when_installed(site, hook, tmp_path):
    _module, _source, shell = examples()[hook]
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=tmp_path, env=env_with(site),
                          capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, f"{shell}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert "trompe: skipping" not in done.stderr and "deprecated" not in done.stderr
