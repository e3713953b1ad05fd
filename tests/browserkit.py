"""Headless Chromium for tests that look at what a person sees: a page's screenshot, and the DOM after its scripts ran
(where a test page writes what it measured, e.g. each text's box, for the test to read).

Debian's `chromium-headless-shell` (apt) or any Chromium/Chrome on PATH. It runs without Chromium's own sandbox:
that needs user namespaces a container may not grant (and refuses to start as root), and the pages are the
test's own.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from needs import missing

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")


def browser() -> str:
    """The Chromium binary, or this test skipped (failed in CI) naming how to install one."""
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        missing("headless Chromium", "apt-get install chromium-headless-shell")
    return found


def _run(*args: str, timeout: float = 120) -> str:
    flags = ["--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--allow-file-access-from-files",
             "--no-sandbox"]
    done = subprocess.run([browser(), *flags, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, f"chromium exited {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout


def _url(page: Path | str) -> str:
    return page.as_uri() if isinstance(page, Path) else page


def screenshot(page: Path | str, out: Path, width: int, height: int) -> Path:
    """`page` (a file, or a URL) as Chromium draws it in a `width` x `height` window, saved as the PNG `out`."""
    _run(f"--screenshot={out}", f"--window-size={width},{height}", "--virtual-time-budget=5000", _url(page))
    assert out.is_file(), f"chromium wrote no screenshot of {page}"
    return out


def dom_after_scripts(page: Path | str) -> str:
    """The page's HTML (a file, or a URL) after its scripts ran (Chromium's --dump-dom)."""
    return _run("--virtual-time-budget=5000", "--dump-dom", _url(page))
