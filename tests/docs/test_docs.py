"""The documentation as a user meets it: the site builds, the README keeps its promises, marked snippets run.

A fenced block preceded by the HTML comment `<!-- run -->` is executed by `test_marked_snippets_run`, in order,
page by page, in a fresh folder with no API keys: a documented command that stops working fails CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import needs

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKED = re.compile(r"<!-- run -->\s*\n```(bash|python)[^\n]*\n(.*?)\n```", re.S)
README_LIMIT = 15 * 1024


def snippets(page: Path) -> list[tuple[str, str]]:
    """The marked (language, code) blocks of one page, in page order."""
    return MARKED.findall(page.read_text(encoding="utf-8"))


def fenced_bash(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)\n```", text, re.S)


def require(tool: str) -> str:
    """A tool the docs checks need: skipped on a developer's machine without it, a failure in CI."""
    path = shutil.which(tool, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if path is None:
        needs.missing(tool, "pip install -e '.[dev]' installs the docs tools")
    return path


def test_site_builds_strictly_and_offline(tmp_path):
    mkdocs = require("mkdocs")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    pages = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    expected = {f"{p.stem}/index.html" for p in (ROOT / "docs").glob("*.md") if p.stem != "index"}
    assert expected <= pages, f"pages missing from the site: {sorted(expected - pages)}"
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in home, "the site must not fetch fonts from the network"


def test_readme_is_short_and_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= README_LIMIT, f"README.md is {len(text.encode())} bytes; keep it under 15 KB"
    serve, tests = fenced_bash(text)[:2]
    assert serve.strip().endswith("trompe-server") and "pip install -e ." in serve
    assert tests.strip().endswith("python -m pytest")


def test_ci_runs_the_readme_test_command():
    readme_tests = fenced_bash((ROOT / "README.md").read_text(encoding="utf-8"))[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_tests in ci, ".ci/run must run the README's test command exactly as written"


def test_every_docs_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [p.name for p in (ROOT / "docs").glob("*.md") if p.name not in nav]
    assert not missing, f"docs pages not reachable from mkdocs.yml's nav: {missing}"


def test_readme_links_point_at_existing_pages():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\((docs/[^)#]+)", text)
    assert targets, "the README should link into docs/"
    assert [t for t in targets if not (ROOT / t).exists()] == []


@pytest.mark.parametrize("page", [p for p in PAGES if snippets(p)], ids=lambda p: p.name)
def test_marked_snippets_run(page, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.update(HOME=str(tmp_path), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               NO_COLOR="1", TROMPE_DOCS_TEST="1")
    for number, (language, code) in enumerate(snippets(page), 1):
        command = ["bash", "-euo", "pipefail", "-c", code] if language == "bash" else [sys.executable, "-c", code]
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (f"{page.name}, marked block {number} exited {done.returncode}:\n{code}\n"
                                      f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
