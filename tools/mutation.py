"""Mutation testing of the core modules: how many small planted bugs the tests catch (mutmut).

Slow on 2 cores, so it is not part of CI. Each group mutates a few modules and runs only the tests that guard
them. mutmut wants one import root, so the packages are staged side by side under WORKDIR/src together with a
copy of tests/; the working tree is never touched.

    pip install -e ".[dev]" mutmut
    python tools/mutation.py                      # every group
    python tools/mutation.py --group answers --group nuct --children 2
    python tools/mutation.py --group registry --show     # each survivor's diff, to judge it
    python tools/mutation.py --group exports --keep /tmp/mut --resume   # carry on a kept run that stopped
    python tools/mutation.py --group harness --mutants 'trompe_agents.datasets.vstar.*'   # one module's mutants
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"trompe_kernel": "servers", "trompe_server": "servers", "trompe_draw": "plugins",
            "trompe_analysis": "plugins", "trompe_vision": "plugins", "trompe_agents": "agents",
            "trompe_prompts": "prompts", "trompe": "inspectai"}
ALSO_COPY = ["docs", ".ci", "bench", "README.md", "mkdocs.yml"]  # what some tests read or import beside tests/

REDIS_TESTS = ["tests/server/test_redis_expiry.py", "tests/server/test_storage_ids.py",
               "tests/server/test_redis_bounded.py", "tests/server/test_session_quotas.py",
               "tests/server/test_registry_races.py", "tests/server/test_redis_damaged.py",
               "tests/server/test_redis_registry.py", "tests/server/test_redis_scripts.py",
               "tests/server/test_pixel_cache.py", "tests/server/test_redis_client.py"]

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
    "runs": (["trompe_agents/illusion/runner.py", "trompe_agents/illusion/runoptions.py",
              "trompe_agents/illusion/results.py", "trompe_agents/illusion/correctness.py",
              "trompe_agents/illusion/tally.py", "trompe_agents/illusion/runmeta.py",
              "trompe_agents/illusion/answering.py", "trompe_agents/illusion/submit.py",
              "trompe_agents/backends/ratelimit.py"],
             ["tests/illusion/test_resume.py", "tests/illusion/test_submit.py", "tests/illusion/test_failures.py",
              "tests/illusion/test_correct.py",
              "tests/illusion/test_run.py::test_per_sample_errors_are_recorded_and_the_run_goes_on",
              "tests/illusion/test_run.py::test_concurrency_bounds_samples_in_flight",
              "tests/illusion/test_run.py::test_rate_limit_spaces_request_starts_evenly"]),
    "metrics": (["trompe_agents/datasets/metrics.py", "trompe_agents/records.py"],
                ["tests/datasets/test_metrics.py", "tests/agents/test_sample_records.py",
                 "tests/illusion/test_stats.py"]),
    "nuct": (["trompe_agents/sevex/nuct.py"],
             ["tests/sevex/test_nuct.py", "tests/sevex/test_strategies.py", "tests/sevex/test_records.py"]),
    # http: only the in-process tests (the `trompe-server --http` subprocesses import the unmutated package)
    "http": (["trompe_server/http.py"],
             ["tests/server/test_tokenless_http.py::test_only_the_exact_token_passes",
              "tests/server/test_tokenless_http.py::test_any_other_token_is_refused",
              "tests/server/test_tokenless_http.py::test_a_client_cut_off_mid_body_is_not_logged_as_a_server_error",
              "tests/server/test_http_hardening.py::test_running_out_of_descriptors_in_accept_is_one_line_not_a_crash",
              "tests/server/test_http_hardening.py::test_connections_to_the_listening_socket_send_small_replies_at_once",
              "tests/server/test_http_guards.py", "tests/server/test_client_key.py"]),
    "app": (["trompe_server/app.py"],
            ["tests/server/test_session_tools.py", "tests/server/test_limits.py", "tests/server/test_tool_context.py",
             "tests/server/test_tool_names.py", "tests/server/test_concurrency.py",
             "tests/server/test_argument_messages.py", "tests/server/test_redis_damaged.py",
             "tests/server/test_client_key.py", "tests/server/test_app_replies.py",
             "tests/server/test_admission.py", "tests/server/test_tool_schemas.py", "tests/server/test_plugins.py"]),
    "storage": (["trompe_server/redis_storage.py"], REDIS_TESTS),
    "schemas": (["trompe_server/tool_schemas.py"],
                ["tests/server/test_tool_schemas.py", "tests/server/test_tool_names.py",
                 "tests/server/test_argument_messages.py", "tests/server/test_session_tools.py"]),
    "limits": (["trompe_server/limits.py"], ["tests/server/test_limits.py", "tests/docs/test_scaling_commands.py"]),
    # exports: what report --json, samples.csv and compare --json write, against the hand counts
    "exports": (["trompe_agents/illusion/export.py", "trompe_agents/illusion/stats.py",
                 "trompe_agents/illusion/compare.py"],
                # not test_exports.py's shell pipeline: its subprocess imports the unmutated package
                ["tests/illusion/test_exported_numbers.py",
                 *(f"tests/illusion/test_exports.py::test_{name}" for name in (
                     "report_json_holds_totals_groups_and_the_lmms_eval_shape",
                     "samples_csv_has_the_documented_columns_and_reads_in_a_dataframe_library",
                     "every_chart_is_an_svg_file_with_titled_axes_and_the_header_is_a_settings_table",
                     "each_psychometric_x_axis_names_its_familys_unit")),
                 "tests/illusion/test_stats.py", "tests/illusion/test_compare.py",
                 "tests/illusion/test_score_numbers.py", "tests/illusion/test_one_accuracy.py",
                 "tests/lmms/test_lmms_samples.py"]),  # compare over two lmms-eval samples logs
    # harness: each benchmark's scorers (its module, loader included) and the matchers they share
    "harness": ([f"trompe_agents/datasets/{m}.py" for m in (
                    "harness", "scorers", "blink_match", "blink_judge", "vlmeval_match", "vlmeval_mcq", "blink",
                    "blindtest", "hallusionbench", "vstar", "illusionvqa")],
                ["tests/datasets/test_scorers.py", "tests/datasets/test_harness_boundaries.py",
                 "tests/datasets/test_free_text_replies.py", "tests/datasets/test_vlmeval_mcq.py",
                 "tests/datasets/test_dataset_loaders.py", "tests/datasets/test_dataset_boundaries.py",
                 "tests/illusion/test_score_numbers.py", "tests/datasets/test_judge_requests.py",
                 # HallusionBench's groups, BlindTest's task mean, the benchmark CLI's printed metrics
                 "tests/datasets/test_metrics.py", "tests/datasets/test_benchmark_cli.py",
                 "tests/datasets/test_hallusion_rules.py",
                 # the loaders' labels, answers, splits and file shapes
                 *(f"tests/datasets/test_{name}.py" for name in (
                     "dataset_labels", "dataset_answers", "label_content", "splits", "tsv", "parquet_memory",
                     "answer_types", "loaded_samples")),
                 *(f"tests/agents/test_plugin_hooks.py::test_{name}" for name in (  # the scorers' registry
                     "a_plugin_taking_a_built_in_name_is_refused_naming_both",
                     "plugin_registrations_are_offered_beside_the_built_ins")),
                 # its `dataset info` subprocesses import the unmutated package: 5 s a surviving mutant, for nothing
                 "--deselect=tests/datasets/test_dataset_boundaries.py::"
                 "test_the_command_line_refuses_with_one_line_and_reads_with_the_flag"]),
    # inspect: the Inspect adapter's dataset and scorers, called directly and through one in-process `eval` per
    # solver kind; not test_inspect_tasks.py / _roundtrip.py (a minute and a half a surviving mutant, and their
    # parity checks go through solvers.py) nor test_inspect_offline.py's `inspect eval` subprocesses
    "inspect": (["trompe/samples.py", "trompe/scorers.py"],
                ["tests/inspect/test_inspect_records.py", "tests/inspect/test_inspect_answer_types.py",
                 "tests/inspect/test_inspect_offline.py::test_a_trompe_function_answers_in_inspect_as_in_illusion_agent_run"]),
    # executors: not Ray's, and only the in-process tests (the CLI subprocesses import the unmutated package); the
    # spawned workers of test_executor_processes.py run the mutant too, but only what runs here is covered
    "executors": ([f"trompe_agents/executors/{m}.py" for m in ("__init__", "base", "processes")],
                  ["tests/executors/test_executor_processes.py",
                   "tests/executors/test_workers.py::test_workers_must_be_positive",
                   "tests/agents/test_plugin_hooks.py"]),
}

# Hand-planted bugs in the Lua scripts (mutmut does not mutate the script text): (name, text, replacement),
# each applied alone to redis_scripts.py; the storage tests must fail on every one.
LUA_MUTANTS: list[tuple[str, str, str]] = [
    ("create: no TTL on the new session's meta", "redis.call('EXPIRE', skey(sid, 'meta'), ttl)\nif opened",
     "if opened"),
    ("create: the open's request id never expires", "redis.call('SET', opened, sid, 'EX', ttl)",
     "redis.call('SET', opened, sid)"),
    ("create: per-client quota off by one", "redis.call('ZCARD', mine) >= per_client",
     "redis.call('ZCARD', mine) > per_client"),
    ("create: max sessions off by one", "redis.call('ZCARD', P .. ':sessions') >= max_sessions",
     "redis.call('ZCARD', P .. ':sessions') > max_sessions"),
    ("create: a retried open ignores its request id", "if earlier and live(earlier, idle) then return earlier end",
     "if false then return earlier end"),
    ("create: the owner is not recorded", "redis.call('HSET', P .. ':owners', sid, client)\n", ""),
    ("expire: the order list never expires", "for _, part in ipairs({'meta', 'records', 'order', 'blobs'})",
     "for _, part in ipairs({'meta', 'records', 'blobs'})"),
    ("append: the nonce never expires", "redis.call('SET', nonce_key, image_id, 'EX', ttl)",
     "redis.call('SET', nonce_key, image_id)"),
    ("append: max images off by one", "if count >= max_images", "if count > max_images"),
    ("append: session bytes off by one", "if held + nbytes > max_bytes", "if held + nbytes >= max_bytes"),
    ("append: pixels not refreshed", "extend(px, ttl)\nredis.call('INCR', ref)", "redis.call('INCR', ref)"),
    ("append: the reference count is not taken", "redis.call('INCR', ref)\n", ""),
    ("append: the bytes held are not counted", "redis.call('HINCRBY', skey(sid, 'meta'), 'nbytes', nbytes)\n", ""),
    ("append: the blob set misses the digest", "redis.call('SADD', skey(sid, 'blobs'), digest)\n", ""),
    ("append: a retried append stores twice", "if earlier then return {'again', earlier} end\n", ""),
    ("append: an idle session still takes images", "if not live(sid, idle) then return {'session', '0'} end\n", ""),
    ("append: output ids count from the wrong key", "'counter', 1))", "'nbytes', 1))"),
    ("drop: pixels freed while still used", "<= 0 then", "<= 1 then"),
    ("drop: pixels never freed", "redis.call('DEL', P .. ':ref:' .. digest, P .. ':px:' .. digest)",
     "redis.call('DEL', P .. ':ref:' .. digest)"),
    ("drop: the order list is left behind", "skey(sid, 'records'), skey(sid, 'order'), skey(sid, 'blobs'))",
     "skey(sid, 'records'), skey(sid, 'blobs'))"),
    ("drop: the owner keeps the session", "  disown(sid)\n  return count", "  return count"),
    ("idle: the window is off (idle sessions live)", "'(' .. (now - idle)", "'(' .. (now - 2 * idle)"),
    ("idle: live sessions are swept", "return score and tonumber(score) >= now - idle",
     "return score and tonumber(score) >= now - idle / 8"),
    ("touch: the last use is not recorded", "used(sid)\nlocal refreshed", "local refreshed"),
    ("touch: TTLs never refreshed", "if now - refreshed > idle / 4 then refresh(sid, ttl) end", ""),
    ("refresh: pixel TTLs only shortened", "extend(P .. ':px:' .. digest, ttl)",
     "redis.call('EXPIRE', P .. ':px:' .. digest, ttl, 'LT')"),
    ("quota: evicts the newest of the largest holder",
     "redis.call('ZRANGE', P .. ':c:' .. string.sub(top, 35), 0, 0)[1]",
     "redis.call('ZRANGE', P .. ':c:' .. string.sub(top, 35), -1, -1)[1]"),
    ("quota: the standing counts up, not down", "1e12 - held", "held"),
    ("unused: frees pixels a record uses", "if redis.call('EXISTS', P .. ':ref:' .. digest) == 1 then return 0 end\n",
     ""),
]

ALL_GROUPS = [*sorted(GROUPS), "lua"]  # lua: the planted list above, run by run_planted


def stage(workdir: Path, modules: list[str], tests: list[str]) -> None:
    """Copy the packages under workdir/src and the tests beside them, with mutmut's settings for this group."""
    for package, parent in PACKAGES.items():
        shutil.copytree(ROOT / parent / package, workdir / "src" / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", workdir / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    for extra in ALSO_COPY:
        copy = shutil.copytree if (ROOT / extra).is_dir() else shutil.copy2
        copy(ROOT / extra, workdir / extra)
    stage_settings(workdir, modules, tests)


def stage_settings(workdir: Path, modules: list[str], tests: list[str]) -> None:
    """mutmut's settings for this group, and pytest's as the suite runs them, in workdir/pyproject.toml."""
    existing = [t for t in tests if t.startswith("-") or (ROOT / t.split("::")[0]).exists()]  # and pytest options
    settings = {
        "source_paths": ["src"],
        "only_mutate": [f"src/{m}" for m in modules],
        "pytest_add_cli_args_test_selection": existing,
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q", "-n", "0"],  # in mutmut's process: no workers
        "also_copy": ALSO_COPY,
    }
    lines = ["[tool.mutmut]"] + [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    lines += ["", "[tool.pytest.ini_options]"]  # anyio_mode and the rest, as the suite runs them
    lines += [f"{key} = {json.dumps(value)}" for key, value in pytest_options["ini_options"].items()]
    (workdir / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def restage(workdir: Path, modules: list[str], tests: list[str]) -> None:
    """--resume: stage today's tests and unmutated packages beside a kept run, whose mutmut results stay."""
    for module in modules:
        if (workdir / "src" / module).read_bytes() != (ROOT / PACKAGES[module.split("/")[0]] / module).read_bytes():
            raise SystemExit(f"--resume: {module} changed since the run kept in {workdir}; run without --resume")
    fresh = workdir / "restaged"
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    stage(fresh, [], tests)
    for path in (fresh / "src").rglob("*"):
        module = path.relative_to(fresh / "src").as_posix()
        if path.is_file() and module not in modules:
            for target in (workdir / "src", workdir / "mutants" / "src"):  # mutmut copies src into mutants/ once
                (target / module).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target / module)
    for extra in ["tests", *ALSO_COPY]:
        copy = shutil.copytree if (fresh / extra).is_dir() else shutil.copy2
        shutil.rmtree(workdir / extra, ignore_errors=True)
        copy(fresh / extra, workdir / extra)
    stage_settings(workdir, modules, tests)
    shutil.rmtree(fresh)


def run_group(name: str, children: int, keep: Path | None, show: bool = False, resume: bool = False,
              patterns: list[str] | None = None) -> dict[str, object]:
    """Mutate one group's modules against its tests; the counts, the survivors and (with show) their diffs; with
    `patterns` (mutmut's names, `*` as a wildcard), only the mutants they name."""
    modules, tests = GROUPS[name]
    workdir = (keep / name) if keep else Path(tempfile.mkdtemp(prefix=f"trompe-mutation-{name}-"))
    if resume and (workdir / "mutants").is_dir():
        restage(workdir, modules, tests)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        stage(workdir, modules, tests)
    try:
        mutmut = [sys.executable, "-m", "mutmut"]
        log = workdir / "mutmut-run.log"
        with log.open("a" if resume else "w", encoding="utf-8") as out:
            ran = subprocess.run([*mutmut, "run", "--max-children", str(children), *(patterns or [])], cwd=workdir,
                                 stdout=out, stderr=subprocess.STDOUT, check=False)
        if ran.returncode != 0:  # e.g. its clean run failed: say so, not a score of 0% over untested mutants
            tail = log.read_text(encoding="utf-8", errors="replace").replace("\r", "\n")[-3000:]
            raise SystemExit(f"{name}: mutmut run exited with {ran.returncode}:\n{tail}")
        listing = subprocess.run([*mutmut, "results", "--all", "true"], cwd=workdir, capture_output=True,
                                 text=True, check=False).stdout
        status: dict[str, str] = {}
        for line in listing.splitlines():
            mutant, _, state = line.strip().rpartition(": ")
            if mutant and (not patterns or any(fnmatch.fnmatchcase(mutant, p) for p in patterns)):
                status[mutant] = state
        counts = {state: sum(1 for s in status.values() if s == state) for state in set(status.values())}
        survivors = sorted(m for m, s in status.items() if s in ("survived", "no tests"))
        diffs = {m: subprocess.run([*mutmut, "show", m], cwd=workdir, capture_output=True, text=True,
                                   check=False).stdout for m in survivors} if show else {}
        return {"group": name, "modules": modules, "counts": counts, "survivors": survivors, "diffs": diffs}
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


def run_planted(name: str, keep: Path | None, show: bool = False) -> dict[str, object]:
    """Apply each hand-planted Lua bug alone to a staged copy and run the storage tests; counted as mutmut's."""
    workdir = (keep / name) if keep else Path(tempfile.mkdtemp(prefix=f"trompe-mutation-{name}-"))
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    try:
        stage(workdir, [], REDIS_TESTS)
        scripts = workdir / "src" / "trompe_server" / "redis_scripts.py"
        original = scripts.read_text(encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(workdir / "src"),
                                                                         os.environ.get("PYTHONPATH")]))}
        pytest = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", "-p", "no:randomly",
                  *(t for t in REDIS_TESTS if (ROOT / t).exists())]
        baseline = subprocess.run(pytest, cwd=workdir, env=env, capture_output=True, text=True, check=False)
        if baseline.returncode != 0:
            raise SystemExit(f"the storage tests fail without a planted bug:\n{baseline.stdout[-3000:]}")
        status: dict[str, str] = {}
        for mutant, text, replacement in LUA_MUTANTS:
            if original.count(text) != 1:
                raise SystemExit(f"planted mutant {mutant!r}: its text is in redis_scripts.py "
                                 f"{original.count(text)} times, not once; update LUA_MUTANTS")
            scripts.write_text(original.replace(text, replacement), encoding="utf-8")
            done = subprocess.run(pytest, cwd=workdir, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, check=False)
            status[mutant] = "survived" if done.returncode == 0 else "killed"
            print(f"{name}: {mutant}: {status[mutant]}", file=sys.stderr, flush=True)
        scripts.write_text(original, encoding="utf-8")
        counts = {state: sum(1 for s in status.values() if s == state) for state in set(status.values())}
        survivors = sorted(m for m, s in status.items() if s == "survived")
        diffs = {m: f"- {t}\n+ {r}" for m, t, r in LUA_MUTANTS if m in survivors} if show else {}
        return {"group": name, "modules": ["trompe_server/redis_scripts.py"], "counts": counts,
                "survivors": survivors, "diffs": diffs}
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
    parser.add_argument("--group", action="append", choices=ALL_GROUPS, help="group to run (default: all)")
    parser.add_argument("--children", type=int, default=2, help="mutants tested in parallel (default 2)")
    parser.add_argument("--keep", type=Path, help="keep each group's work folder under this folder (for browse)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    parser.add_argument("--resume", action="store_true",
                        help="with --keep: keep the kept run's results and test only the mutants it did not reach")
    parser.add_argument("--show", action="store_true", help="print each survivor's diff (mutmut show NAME)")
    parser.add_argument("--mutants", action="append", metavar="PATTERN",
                        help="only the mutants mutmut names so (e.g. 'trompe_agents.datasets.vstar.*'); repeatable")
    args = parser.parse_args(argv)
    if args.resume and args.keep is None:
        parser.error("argument --resume: needs --keep, the folder the earlier run was kept in")
    if args.children < 1:
        parser.error(f"argument --children: {args.children} is not allowed; accepted: 1 or more")
    results = [run_planted(name, args.keep, args.show) if name == "lua" else
               run_group(name, args.children, args.keep, args.show, args.resume, args.mutants)
               for name in (args.group or ALL_GROUPS)]
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
