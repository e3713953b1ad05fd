"""CPU time of paths every run or tool call repeats, this checkout against an earlier one, side by side.

Each row runs in a fresh child process per tree, the trees alternating, and is the child's own CPU time for
the measured part only (imports, inputs and one warm-up call come before it, except in the row that times an
import); medians of --repeat. The baseline is `git archive REF` of servers/, plugins/ and agents/, put first on
the child's PYTHONPATH (the child checks that the modules it used came from there).

    python bench/hot_paths.py --baseline 3c0acea [--repeat 5] [--rows app,claude,normalize]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from memory_admission import extract
from tqdm import tqdm

BENCH = Path(__file__).resolve().parent
BACKEND = ("from trompe_agents.backends.base import BackendOptions\n"
           "from trompe_agents.backends.{module} import {cls} as Backend\n"
           "OPTIONS = BackendOptions(model='m', base_url='http://127.0.0.1:9', api_key='k')\n"
           "Backend(OPTIONS)")
# name: (what the row measures, the module whose origin is checked, setup code, the code timed)
ROWS = {
    "cli": ("import trompe_agents.illusion.cli (every illusion-agent command, before it works)",
            "trompe_agents.illusion.cli", "", "import trompe_agents.illusion.cli"),
    "app": ("create_app(ServerConfig()) x20, default plugins", "trompe_server.app",
            "from trompe_server.app import ServerConfig, create_app\ncreate_app(ServerConfig()).registry.close()",
            "for _ in range(20):\n    create_app(ServerConfig()).registry.close()"),
    "claude": ("ClaudeBackend(...) x10", "trompe_agents.backends.claude",
               BACKEND.format(module="claude", cls="ClaudeBackend"), "for _ in range(10):\n    Backend(OPTIONS)"),
    "openai": ("OpenAIResponsesBackend(...) x10", "trompe_agents.backends.openai_responses",
               BACKEND.format(module="openai_responses", cls="OpenAIResponsesBackend"),
               "for _ in range(10):\n    Backend(OPTIONS)"),
    "gemini": ("GeminiBackend(...) x10", "trompe_agents.backends.gemini",
               BACKEND.format(module="gemini", cls="GeminiBackend"), "for _ in range(10):\n    Backend(OPTIONS)"),
    "normalize": ("normalize_image, 12 MP, 22 flat colours + noise", "trompe_agents.illusion.normalize",
                  "from PIL import Image\nfrom sample_images import flat_regions\n"
                  "from trompe_agents.illusion.normalize import normalize_image\n"
                  "IM = Image.fromarray(flat_regions(4000, 3000, 22))\nnormalize_image(IM.crop((0, 0, 200, 200)))",
                  "normalize_image(IM)"),
    "channels": ("extract_channel H, S and V, 6 MP photo", "trompe_analysis.channels",
                 "from sample_images import photo\nfrom trompe_analysis.channels import channel_values\n"
                 "RGB = photo(3000, 2000)\nchannel_values(RGB[:100, :100], 'H')",
                 "for c in 'HSV':\n    channel_values(RGB, c)"),
}
CHILD = """import importlib, json, sys, time
sys.path.insert(0, {bench!r})
{setup}
start = time.process_time()
{work}
cpu = time.process_time() - start
print(json.dumps({{"cpu_s": cpu, "origin": importlib.import_module({module!r}).__file__}}))
"""


def measure(row: str, tree: Path, pythonpath: str | None = None) -> float:
    """One child's CPU seconds for the row's timed code, refusing a child whose module did not come from `tree`
    (this checkout's editable install when no `pythonpath` is given)."""
    _label, module, setup, work = ROWS[row]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    code = CHILD.format(bench=str(BENCH), setup=setup, work=work, module=module)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{row}: the child failed:\n{done.stderr[-2000:]}")
    reading = json.loads(done.stdout.splitlines()[-1])
    if not Path(reading["origin"]).is_relative_to(tree):
        raise SystemExit(f"{row}: {module} came from {reading['origin']}, not from {tree}")
    return reading["cpu_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REF", required=True, help="the earlier tree, a git ref")
    parser.add_argument("--repeat", type=int, default=5, help="children per tree and row (default 5)")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, of {', '.join(ROWS)}")
    args = parser.parse_args()
    rows = args.rows.split(",")
    if unknown := set(rows) - set(ROWS):
        parser.error(f"--rows: unknown {', '.join(sorted(unknown))}; choose from {', '.join(ROWS)}")
    with tempfile.TemporaryDirectory(prefix="trompe-bench-") as tmp:
        baseline = extract(args.baseline, Path(tmp), ("servers", "plugins", "agents"))
        load = os.getloadavg()[0]
        times: dict[str, tuple[list[float], list[float]]] = {row: ([], []) for row in rows}
        for _ in tqdm(range(args.repeat), desc="rounds", unit="round"):
            for row in rows:  # alternating trees, so a change in the box's load falls on both
                times[row][0].append(measure(row, Path(tmp), baseline))
                times[row][1].append(measure(row, BENCH.parent))
    print(f"\nCPU time of the timed part, medians of {args.repeat}; load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    print(f"| row | {args.baseline} ms | this checkout ms | ratio |\n|---|---:|---:|---:|")
    for row in rows:
        before, after = (statistics.median(t) * 1e3 for t in times[row])
        print(f"| {ROWS[row][0]} | {before:.1f} | {after:.1f} | {after / before:.2f}x |")


if __name__ == "__main__":
    main()
