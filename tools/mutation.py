"""Mutation testing of the core modules: how many small planted bugs the tests catch (mutmut).

Slow on 2 cores, so it is not part of CI. Each group mutates a few modules and runs only the tests that guard
them. mutmut wants one import root, so the packages are staged side by side under WORKDIR/src together with a
copy of tests/; the working tree is never touched.

    pip install -e ".[dev]" mutmut
    python tools/mutation.py                      # every group
    python tools/mutation.py --group answers --group nuct --children 2
    python tools/mutation.py --group registry --show     # each survivor's diff, to judge it
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"trompe_server": "servers", "trompe_draw": "plugins", "trompe_analysis": "plugins",
            "trompe_vision": "plugins", "trompe_agents": "agents", "trompe_prompts": "prompts"}
ALSO_COPY = ["docs", ".ci", "README.md", "mkdocs.yml"]  # files some tests read beside tests/

# group: (modules to mutate, relative to the import root; the tests that guard them)
GROUPS: dict[str, tuple[list[str], list[str]]] = {
    "registry": (["trompe_server/registry.py", "trompe_server/memory_storage.py"],
                 ["tests/server/test_session_tools.py", "tests/server/test_limits.py",
                  "tests/server/test_concurrency.py", "tests/server/test_session_quotas.py",
                  "tests/server/test_admission.py", "tests/server/test_redis_registry.py",
                  "tests/server/test_registry_races.py", "tests/server/test_spill.py",
                  "tests/plugins/test_draw_images.py"]),
    "arguments": (["trompe_server/toolapi.py", "trompe_server/argcheck.py"],
                  ["tests/server/test_inputs.py", "tests/server/test_properties.py",
                   "tests/plugins/test_argument_properties.py", "tests/plugins/test_draw_shapes.py",
                   "tests/plugins/test_draw_regions.py", "tests/plugins/test_draw_images.py",
                   "tests/plugins/test_analysis_colors.py", "tests/plugins/test_analysis_image.py",
                   "tests/server/test_argument_messages.py", "tests/server/test_tool_context.py"]),
    "answers": (["trompe_agents/datasets/answers.py"],
                ["tests/datasets/test_dataset_answers.py", "tests/datasets/test_extract_table.py"]),
    "retry": (["trompe_agents/backends/retry.py", "trompe_agents/backends/error_kinds.py", "trompe_agents/failures.py"],
              # the SDKs in memory: the loopback files take minutes a mutant
              ["tests/agents/test_retry_policy.py", "tests/agents/test_sample_records.py"]),
    # runs: not test_run.py's SIGKILL test (its subprocess imports the unmutated package) nor its four-vendor run
    "runs": (["trompe_agents/illusion/runner.py", "trompe_agents/illusion/submit.py",
              "trompe_agents/backends/ratelimit.py"],
             ["tests/illusion/test_resume.py", "tests/illusion/test_submit.py", "tests/illusion/test_failures.py",
              "tests/illusion/test_run.py::test_per_sample_errors_are_recorded_and_the_run_goes_on",
              "tests/illusion/test_run.py::test_concurrency_bounds_samples_in_flight",
              "tests/illusion/test_run.py::test_rate_limit_spaces_request_starts_evenly"]),
    "metrics": (["trompe_agents/datasets/metrics.py", "trompe_agents/records.py"],
                ["tests/datasets/test_metrics.py", "tests/agents/test_sample_records.py",
                 "tests/illusion/test_stats.py"]),
    "nuct": (["trompe_agents/sevex/nuct.py"],
             ["tests/sevex/test_nuct.py", "tests/sevex/test_strategies.py", "tests/sevex/test_records.py"]),
}


def stage(workdir: Path, modules: list[str], tests: list[str]) -> None:
    """Copy the packages under workdir/src and the tests beside them, with mutmut's settings for this group."""
    for package, parent in PACKAGES.items():
        shutil.copytree(ROOT / parent / package, workdir / "src" / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", workdir / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    for extra in ALSO_COPY:
        copy = shutil.copytree if (ROOT / extra).is_dir() else shutil.copy2
        copy(ROOT / extra, workdir / extra)
    existing = [t for t in tests if (ROOT / t.split("::")[0]).exists()]
    settings = {
        "source_paths": ["src"],
        "only_mutate": [f"src/{m}" for m in modules],
        "pytest_add_cli_args_test_selection": existing,
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q"],
        "also_copy": ALSO_COPY,
    }
    lines = ["[tool.mutmut]"] + [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    lines += ["", "[tool.pytest.ini_options]"]  # anyio_mode and the rest, as the suite runs them
    lines += [f"{key} = {json.dumps(value)}" for key, value in pytest_options["ini_options"].items()]
    (workdir / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_group(name: str, children: int, keep: Path | None, show: bool = False) -> dict[str, object]:
    """Mutate one group's modules against its tests; the counts, the survivors and (with show) their diffs."""
    modules, tests = GROUPS[name]
    workdir = (keep / name) if keep else Path(tempfile.mkdtemp(prefix=f"trompe-mutation-{name}-"))
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    try:
        stage(workdir, modules, tests)
        mutmut = [sys.executable, "-m", "mutmut"]
        subprocess.run([*mutmut, "run", "--max-children", str(children)], cwd=workdir,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        listing = subprocess.run([*mutmut, "results", "--all", "true"], cwd=workdir, capture_output=True,
                                 text=True, check=False).stdout
        status: dict[str, str] = {}
        for line in listing.splitlines():
            mutant, _, state = line.strip().rpartition(": ")
            if mutant:
                status[mutant] = state
        counts = {state: sum(1 for s in status.values() if s == state) for state in set(status.values())}
        survivors = sorted(m for m, s in status.items() if s in ("survived", "no tests"))
        diffs = {m: subprocess.run([*mutmut, "show", m], cwd=workdir, capture_output=True, text=True,
                                   check=False).stdout for m in survivors} if show else {}
        return {"group": name, "modules": modules, "counts": counts, "survivors": survivors, "diffs": diffs}
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


def score(counts: dict[str, int]) -> float:
    """Killed over all judged mutants (a timeout or a crash counts as killed, as mutmut does)."""
    killed = sum(counts.get(k, 0) for k in ("killed", "timeout", "segfault", "suspicious"))
    judged = killed + counts.get("survived", 0) + counts.get("no tests", 0)
    return killed / judged if judged else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", action="append", choices=sorted(GROUPS), help="group to run (default: all)")
    parser.add_argument("--children", type=int, default=2, help="mutants tested in parallel (default 2)")
    parser.add_argument("--keep", type=Path, help="keep each group's work folder under this folder (for browse)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    parser.add_argument("--show", action="store_true", help="print each survivor's diff (mutmut show NAME)")
    args = parser.parse_args(argv)
    if args.children < 1:
        parser.error(f"argument --children: {args.children} is not allowed; accepted: 1 or more")
    results = [run_group(name, args.children, args.keep, args.show) for name in (args.group or sorted(GROUPS))]
    print(f"{'group':<10} {'mutants':>7} {'killed':>7} {'survived':>8} {'no tests':>8} {'score':>6}")
    for r in results:
        c = r["counts"]
        killed = sum(c.get(k, 0) for k in ("killed", "timeout", "segfault", "suspicious"))
        print(f"{r['group']:<10} {sum(c.values()):>7} {killed:>7} {c.get('survived', 0):>8} "
              f"{c.get('no tests', 0):>8} {score(c):>6.0%}")
    for r in results:
        for mutant in r["survivors"]:
            print(f"survived: {mutant}")
            if args.show:
                print(r["diffs"][mutant].rstrip() + "\n")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
