"""The documentation as a user meets it: the site builds, the README keeps its promises, its commands run.

Every ```bash block of README.md and docs/*.md is preceded by one HTML comment that says how it is checked:
`<!-- run -->`: executed by `test_marked_snippets_run`, in order, page by page, in a fresh folder with no API keys;
`<!-- refuses -->`: each of its commands, run alone with no key and no data (blank pictures where it names one),
ends at once with status 2 and one line on stderr saying what is missing (or with status 0), having written no run;
`<!-- not run: REASON -->`: why it cannot run here (another program, a download, a placeholder such as `...`).
A documented command that stops working, or a new block nobody classified, fails CI.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PIL import Image

import needs
from clikit import status as exit_status

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKED = re.compile(r"<!-- run -->\s*\n```(bash|python)[^\n]*\n(.*?)\n```", re.S)
BASH_BLOCK = re.compile(r"(?:<!-- (run|refuses|not run: [^\n]+?) -->\s*\n"
                        r"|(<!-- plugin )\w+ -->\n`\w+/__init__\.py`:\n\n```python\n.*?```\n\n)?"  # tests/kernel's
                        r"```bash[^\n]*\n(.*?)\n```", re.S)
IMAGE = re.compile(r"[\w./~-]+\.(?:png|jpg)\b")
PLACEHOLDER_KEY = re.compile(r"^export [A-Z_]*(KEY|TOKEN)[A-Z_]*=\S*$")
README_LIMIT = 15 * 1024


def snippets(page: Path) -> list[tuple[str, str]]:
    """The marked (language, code) blocks of one page, in page order."""
    return MARKED.findall(page.read_text(encoding="utf-8"))


def bash_blocks(page: Path) -> list[tuple[str, str]]:
    """Every bash block of one page as (how it is checked, code); how is '' where no marker precedes it, and
    'plugin' for the lines after a plugin example (tests/kernel/test_plugin_examples.py runs them installed)."""
    return [("plugin" if plugin else how, code) for how, plugin, code in
            BASH_BLOCK.findall(page.read_text(encoding="utf-8"))]


def commands(code: str) -> list[str]:
    """A block's commands one by one: continuations joined; comments and `export KEY=...` placeholders left out."""
    lines = [line.split(" #", 1)[0].strip() for line in code.replace("\\\n", " ").splitlines()]
    return [line for line in lines if line and not line.startswith("#") and not PLACEHOLDER_KEY.match(line)]


def keyless_env(home: Path) -> dict[str, str]:
    """The environment a reader's commands run in here: no API keys, this interpreter's scripts first."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               NO_COLOR="1", TROMPE_DOCS_TEST="1")
    return env


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
    (_, serve), (_, tests) = bash_blocks(ROOT / "README.md")[:2]
    assert serve.strip().endswith("trompe-server") and "pip install -e ." in serve
    assert tests.strip().endswith("python -m pytest")


def test_ci_runs_the_readme_test_command():
    readme_tests = bash_blocks(ROOT / "README.md")[1][1].strip()
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


def test_every_bash_block_says_how_it_is_checked():
    unmarked = [f"{page.relative_to(ROOT)}: {code.splitlines()[0]}" for page in PAGES
                for how, code in bash_blocks(page) if not how]
    assert not unmarked, ("mark each with <!-- run -->, <!-- refuses --> or <!-- not run: REASON --> "
                          f"(tests/docs/test_docs.py says what each means): {unmarked}")


def run_page(page: Path, folder: Path, env: dict[str, str]) -> str | None:
    """Run one page's marked blocks in order in `folder` with `env`, as a reader pasting them into a shell would:
    the first that fails (its number, code and output), or None."""
    for number, (language, code) in enumerate(snippets(page), 1):
        command = ["bash", "-euo", "pipefail", "-c", code] if language == "bash" else [sys.executable, "-c", code]
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            return (f"{page.name}, marked block {number} exited {done.returncode}:\n{code}\n"
                    f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
    return None


def refuse_block(page: Path, code: str, folder: Path) -> str | None:
    """Run a block's commands one by one in `folder` with no key and no data (a blank picture for each it names):
    each must end at once with status 0, or 2 and one line saying what is missing, and write no run."""
    for image in IMAGE.findall(code):
        (folder / image).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (64, 64), "white").save(folder / image)
    for command in commands(code):
        status, stderr = run_here(command, folder)
        if status != 0 and (status, len(stderr.strip().splitlines())) != (2, 1):
            return f"{page.name}: {command}\nexited {status}\n--- stderr\n{stderr[-3000:]}"
        if list(folder.glob("runs/*/run.json")):
            return f"{page.name}: {command}\nwrote a run before refusing"
    return None


def run_here(command: str, folder: Path) -> tuple[int, str]:
    """A command's status and stderr: a plain `trompe`/`illusion-agent`/`sevex` line (words, `~`, `&&`) through
    its console script's main() in this process, whose imports are paid once; anything else through bash."""
    words = shlex.split(command)
    if words[0] not in IN_PROCESS or set(command) & set("|<>$;`()") or "=" in words[0]:
        done = subprocess.run(["bash", "-c", command], cwd=folder, env=keyless_env(folder), capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
        return done.returncode, done.stderr
    env, cwd, err = dict(os.environ), os.getcwd(), io.StringIO()
    try:
        os.environ.clear()
        os.environ.update(keyless_env(folder))
        os.chdir(folder)
        status = 0
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            for line in and_list(words):
                status = exit_status(main_of(line[0]), [os.path.expanduser(word) for word in line[1:]])
                if status:
                    break
        return status, err.getvalue()
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)


IN_PROCESS = {"trompe": "trompe_agents.cli", "illusion-agent": "trompe_agents.illusion.cli",
              "sevex": "trompe_agents.sevex.cli"}  # pyproject.toml's [project.scripts], each module's main


def main_of(script: str):
    return importlib.import_module(IN_PROCESS[script]).main


def and_list(words: list[str]) -> list[list[str]]:
    """`a && b` as the commands [a, b]."""
    lines = [[]]
    for word in words:
        lines.append([]) if word == "&&" else lines[-1].append(word)
    return lines


REFUSING = [(page, code) for page in PAGES for how, code in bash_blocks(page) if how == "refuses"]


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> dict[object, str | None]:
    """Every page's marked blocks, side by side in threads, each in its own folder (so none sees another's files),
    while the refusing blocks run here one by one (in this process where they can): a page's failure keyed by the
    page, a refusing block's by (page, code)."""
    folders = {page: tmp_path_factory.mktemp(page.stem) for page in PAGES if snippets(page)}
    # each page's environment made here, before run_here starts swapping os.environ under the threads
    envs = {page: keyless_env(folder) for page, folder in folders.items()}
    with ThreadPoolExecutor(max_workers=len(PAGES)) as pool:
        futures = {page: pool.submit(run_page, page, folder, envs[page]) for page, folder in folders.items()}
        found = {(page, code): refuse_block(page, code, tmp_path_factory.mktemp("refuses")) for page, code in REFUSING}
        return found | {page: future.result() for page, future in futures.items()}


@pytest.mark.parametrize("page", [p for p in PAGES if snippets(p)], ids=lambda p: p.name)
def test_marked_snippets_run(page, checked):
    assert checked[page] is None, checked[page]


@pytest.mark.parametrize(("page", "code"), REFUSING, ids=lambda v: v.name if isinstance(v, Path) else commands(v)[0])
def test_blocks_that_need_a_key_or_data_refuse_in_one_line_with_status_2(page, code, checked):
    assert checked[page, code] is None, checked[page, code]
