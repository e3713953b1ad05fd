"""Run the vendor tests on the oldest vendor SDKs and transformers that pyproject.toml's pins allow.

The suite itself runs on the newest releases the pins admit (what `pip install` picks). This takes each pinned
package's lower bound from pyproject.toml (`anthropic>=2.10`, ...), installs exactly that release without its
dependencies into a temporary folder put first on the path, checks the tests' interpreter imports those versions,
and runs the test files that drive the SDKs against the loopback fake vendors (and the transformers backend).
`python tools/oldest_sdks.py` (CI runs it after the suite); extra arguments go to pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PINNED = ("anthropic", "openai", "google-genai", "transformers")
TESTS = ["tests/agents/test_vendor_*.py", "tests/agents/test_vendors_today.py", "tests/agents/test_retry.py",
         "tests/agents/test_hf*.py", "tests/agents/test_gemini_reply_cap.py"]


def lower_bounds() -> dict[str, str]:
    """Each pinned package's lowest admitted release, read from pyproject.toml's dependencies and extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = [*project["dependencies"], *(s for extra in project["optional-dependencies"].values() for s in extra)]
    found = {}
    for requirement in map(Requirement, specs):
        floor = next((s.version for s in requirement.specifier if s.operator == ">="), None)
        if requirement.name in PINNED and floor:
            found[requirement.name] = floor
    missing = set(PINNED) - set(found)
    if missing:
        raise SystemExit(f"oldest_sdks: pyproject.toml pins no lower bound (>=) for {', '.join(sorted(missing))}")
    return found


def main(argv: list[str]) -> int:
    bounds = lower_bounds()
    with tempfile.TemporaryDirectory(prefix="trompe-oldest-") as target:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", target,
                        *(f"{name}=={version}" for name, version in bounds.items())], check=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [target, os.environ.get("PYTHONPATH")]))}
        check = f"import importlib.metadata as m\nfor name in {list(bounds)!r}:\n    print(name, m.version(name))"
        seen = dict(line.split() for line in subprocess.run(
            [sys.executable, "-c", check], env=env, check=True, capture_output=True, text=True).stdout.splitlines())
        if {n: Version(v) for n, v in seen.items()} != {n: Version(v) for n, v in bounds.items()}:
            raise SystemExit(f"oldest_sdks: the tests would import {seen}, not the lower bounds {bounds}")
        print("oldest releases the pins allow:", ", ".join(f"{n} {v}" for n, v in seen.items()), flush=True)
        tests = sorted({str(p.relative_to(ROOT)) for pattern in TESTS for p in ROOT.glob(pattern)})
        return subprocess.run([sys.executable, "-m", "pytest", "-q", *tests, *argv], env=env, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
