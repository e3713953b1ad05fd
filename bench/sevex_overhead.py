"""SEVEX's own overhead with a zero-latency model: per sandbox start, per executed sample, per iteration.

    python bench/sevex_overhead.py [--iterations 5] [--samples 6] [--repeats 20]

Each row is measured with `--sandbox none` (a plain child process: the sandbox before bubblewrap, the
baseline) and with the bubblewrap OS sandbox, side by side. Rows: sandbox start (cold: a fresh sandbox per
program; the same with the process reaped before the answer is returned; warm: taken from a pool started
ahead), one executed dev sample (sandbox + tool calls on the in-process server + PNG transfer to the model),
and one whole exploration iteration (three roles + the dev set), all with scripted models that answer
instantly, so every millisecond is the framework's.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sevex"))
import scripted_models  # noqa: E402

from trompe_agents.backends.base import BackendOptions  # noqa: E402
from trompe_agents.backends.function import FunctionSettings  # noqa: E402
from trompe_agents.datasets.base import Sample  # noqa: E402
from trompe_agents.plugins import create_backend  # noqa: E402
from trompe_agents.sevex.evaluate import Runner  # noqa: E402
from trompe_agents.sevex.explore import ExploreConfig, Explorer  # noqa: E402
from trompe_agents.sevex.roles import Roles  # noqa: E402
from trompe_agents.sevex.isolation import Isolation, choose  # noqa: E402
from trompe_agents.sevex.sandbox import Sandbox, SandboxChild, SandboxLimits  # noqa: E402
from trompe_agents.sevex.tasks import Task  # noqa: E402
from trompe_agents.sevex.tree import Implementation  # noqa: E402
from trompe_agents.toolclient import ToolClient  # noqa: E402

TASK = Task("red-left", "probes", "Is the red square on the left?", "{yes} or {no}", tags=("core",))
TRIVIAL = "def main(images, question):\n    return 'yes'\n"


def samples(folder: Path, n: int) -> list[Sample]:
    out = []
    for i in range(n):
        im = Image.new("RGB", (512, 256), "white")
        x = 40 if i % 2 == 0 else 400
        ImageDraw.Draw(im).rectangle([x, 100, x + 60, 160], fill=(255, 0, 0))
        path = folder / f"s{i}.png"
        im.save(path)
        out.append(Sample(f"s{i}", [path], "Is the red square on the left?", "yes" if i % 2 == 0 else "no"))
    return out


def fn_backend(fn):
    return create_backend("function", BackendOptions(settings=FunctionSettings(function=fn)))


async def sandbox_starts(isolation: Isolation, repeats: int, warm: int) -> list[float]:
    box = Sandbox(warm=warm, isolation=isolation)
    if warm:
        box._refill()
        await asyncio.sleep(1.0)  # let the pool finish starting, as it would between programs
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        await box.run(TRIVIAL, "", [], "", {}, {})
        times.append(time.perf_counter() - start)
        if warm:
            await asyncio.sleep(0.2)  # the pool refills in the background while the model thinks
    await box.close()
    return times


def cpu_seconds() -> float:
    """CPU time of this process and of the children it has reaped (the kernel's rusage, in microseconds where
    /proc/self/stat counts 10 ms ticks): a sandbox's processes, launcher down, once reaped."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def reaped_inline(isolation: Isolation, repeats: int) -> tuple[list[float], list[float]]:
    """A cold start that waits for the process to be reaped and its folder deleted before answering: its wall
    time, and the CPU it took in all (SEVEX's share and the sandbox's), which the machine's load leaves alone."""
    limits = SandboxLimits()
    job = {"code": TRIVIAL, "prompt": "", "images": [], "question": "", "api": {}}
    times, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), cpu_seconds()
        worker = await SandboxChild.start(isolation, limits)
        await worker.run(job, {}, limits)
        await worker.close()
        times.append(time.perf_counter() - start)
        cpu.append(cpu_seconds() - start_cpu)
    return times, cpu


async def per_sample(isolation: Isolation, data: list[Sample], repeats: int) -> list[float]:
    impl = Implementation(scripted_models.CODE["crop"], "{question}")
    box = Sandbox(warm=2, isolation=isolation)
    times = []
    async with ToolClient.in_process() as tools:
        runner = await Runner.create(tools, fn_backend(scripted_models.target), TASK, box, 1)
        for i in range(repeats):
            start = time.perf_counter()
            await runner.run_sample(impl, data[i % len(data)])
            times.append(time.perf_counter() - start)
    await box.close()
    return times


async def per_iteration(isolation: Isolation, data: list[Sample], iterations: int, folder: Path) -> list[float]:
    box = Sandbox(warm=2, isolation=isolation)
    async with ToolClient.in_process() as tools:
        runner = await Runner.create(tools, fn_backend(scripted_models.target), TASK, box, 4)
        explorer = Explorer(folder, runner, Roles(fn_backend(scripted_models.explorer), "t"), data,
                            ExploreConfig(iterations=0), progress=False)
        await explorer.run()
        times = []
        for i in range(1, iterations + 1):
            explorer.config.iterations = i
            start = time.perf_counter()
            await explorer.run(resume=True)
            times.append(time.perf_counter() - start)
    await box.close()
    return times


def row(name: str, base: list[float], times: list[float]) -> str:
    none, bwrap = statistics.median(base) * 1000, statistics.median(times) * 1000
    return f"| {name:<44} | {none:7.1f} | {bwrap:8.1f} | {bwrap / none:6.2f} |"


async def measure(isolation: Isolation, args: argparse.Namespace, data: list[Sample], folder: Path):
    """Every row's times under one isolation."""
    reaped, cpu = await reaped_inline(isolation, args.repeats)
    return [await sandbox_starts(isolation, args.repeats, warm=0), reaped, cpu,
            await sandbox_starts(isolation, args.repeats, warm=2), await per_sample(isolation, data, args.repeats),
            await per_iteration(isolation, data, args.iterations, folder)]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--samples", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = samples(Path(tmp), args.samples)
        base = await measure(choose("none"), args, data, Path(tmp) / "none")
        times = await measure(choose("bwrap"), args, data, Path(tmp) / "bwrap")
    names = ["sandbox start, cold", "sandbox start, cold, reaped before answering",
             "  the same: CPU time (SEVEX + sandbox)", "sandbox start, warm pool",
             "one dev sample (sandbox+crop+ask, 512x256)", f"one iteration ({args.samples} dev samples, 3 roles)"]
    print("| what (zero-latency models), median           | none ms | bwrap ms | bwrap / none |")
    print("|----------------------------------------------|---------|----------|--------------|")
    for name, none, bwrap in zip(names, base, times):
        print(row(name, none, bwrap))


if __name__ == "__main__":
    asyncio.run(main())
