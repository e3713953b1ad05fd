"""`--executor ray` on a local Ray instance (2 CPUs): same results as local, retried tasks, resumable driver."""

import asyncio
import gc
import json
import os
import shutil
import signal
import tempfile
import time

import pytest

if os.environ.get("CI"):
    import ray  # CI installs the [ray] extra: a missing Ray fails there instead of skipping
else:
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed (pip install 'trompe[ray]')")

from runlines import as_lines
from trompe_agents.backends.function import FunctionBackend  # noqa: E402
from trompe_agents.executors import create_executor  # noqa: E402
from trompe_agents.executors.base import ExecutorFailed  # noqa: E402
from trompe_agents.executors.ray_executor import LOCAL_WORKERS  # noqa: E402
from trompe_agents.illusion.agent import AgentConfig  # noqa: E402
from trompe_agents.illusion.runmeta import read_meta  # noqa: E402
from trompe_agents.illusion.runner import run_samples  # noqa: E402
from trompe_agents.illusion.runoptions import RunOptions  # noqa: E402
from trompe_agents.toolclient import ToolClient  # noqa: E402

from executorkit import SCRIPTED, comparable, gate, result_lines, run_cli, spec_for  # noqa: E402

# A Ray cluster, its actors and a killed driver. The timeout only detects a hang: at a load of 40-65 on two cores
# the module took 7:32, its longest tests about 125 s each (5 December 2026).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def gated_run(tmp_path_factory):
    """The run folder whose gate the cluster's actors watch: they see Ray's environment, not the driver's."""
    return tmp_path_factory.mktemp("ray-gated") / "run"


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory, gated_run):
    """A local Ray instance; its workers find `scripted` on PYTHONPATH and keep their temp files in pytest's."""
    root = tmp_path_factory.mktemp("ray")
    sessions = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's socket paths must stay under 108 bytes
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(SCRIPTED), os.environ.get("PYTHONPATH")])))
        mp.setenv("TMPDIR", str(root))  # where workers killed on purpose leave their spill folders
        mp.setenv("TROMPE_TEST_GATE", str(gate(gated_run)))  # the gated model's actors hang until it exists
        for name, value in LOCAL_WORKERS.items():  # what trompe sets for a local instance it starts itself
            mp.setenv(name, value)
        context = ray.init(num_cpus=2, include_dashboard=False, _temp_dir=sessions, logging_level="WARNING")
    try:
        yield context.address_info["gcs_address"]
    finally:
        ray.shutdown()
        shutil.rmtree(sessions, ignore_errors=True)


@pytest.fixture
def ray_executor(ray_cluster):
    """`create_executor("ray", ...)`, whose actors are killed after the test even if it was stopped mid-run: actors
    an interrupted run could not close would hold the cluster's two CPUs, and no later test's could start."""
    made = []

    def make(*args, **kwargs):
        made.append(create_executor("ray", *args, **kwargs))
        return made[-1]

    yield make
    for executor in made:
        for actor in executor.actors:
            ray.kill(actor, no_restart=True)


async def run_in_process(probes, out, executor=None, on_result=None, model="line_then_yes") -> dict:
    import scripted

    async with ToolClient.in_process() as tools:
        return as_lines(await run_samples(
            probes, FunctionBackend(getattr(scripted, model), model=f"scripted:{model}"), tools, AgentConfig(task=1),
            RunOptions(out=out, concurrency=4, progress=False), on_result=on_result, executor=executor))


async def test_ray_gives_the_same_results_as_the_local_executor(ray_executor, probes, tmp_path, scripted_path,
                                                                capsys):
    local, remote = tmp_path / "local", tmp_path / "ray"
    await run_in_process(probes, local)
    executor = ray_executor(spec_for(remote), workers=2, concurrency=4)
    await run_in_process(probes, remote, executor)
    assert comparable(remote) == comparable(local)
    assert len(result_lines(remote)) == len(probes)
    # each actor closed its tool server in the task that opened it (else the spill folder would be left)
    assert executor.actors == [] and "not closed cleanly" not in capsys.readouterr().err


class DriverStopped(Exception):
    """What the driver raises at its first record, as it does when the run folder's disk is full."""


async def test_a_run_stopped_with_answers_in_flight_cancels_them_and_closes_every_actor(ray_executor, probes,
                                                                                      tmp_path, scripted_path,
                                                                                      capsys):
    """The driver stops at its first record while the other samples' answers wait on a silent vendor: the run ends
    at once with the driver's error, the answers in flight are cancelled and every actor is closed and killed,
    instead of the actors' close waiting behind answers that never come."""
    out = tmp_path / "run"
    executor = ray_executor(spec_for(out, "scripted:first_then_silent"), workers=2, concurrency=4)

    def stop(record) -> None:
        raise DriverStopped("stop")

    with pytest.raises(DriverStopped):
        await asyncio.wait_for(run_in_process(probes, out, executor, stop, model="first_then_silent"), 300)
    assert executor.actors == []
    assert "not closed cleanly" not in capsys.readouterr().err


async def test_a_killed_worker_s_tasks_are_retried(ray_executor, probes, tmp_path, scripted_path):
    out = tmp_path / "run"
    executor = ray_executor(spec_for(out, "scripted:slow_line_then_yes"), workers=2, concurrency=4)
    killed = []

    def kill_first_worker(record) -> None:
        if not killed:  # at the first result, the other samples are in flight or queued on both actors
            killed.append(ray.get(executor.actors[0].pid.remote()))
            os.kill(killed[0], signal.SIGKILL)

    records = await run_in_process(probes, out, executor, kill_first_worker, model="slow_line_then_yes")
    assert killed
    assert sorted(records) == sorted(s.id for s in probes)
    assert all(r["answer"] == "yes" and r["error"] is None for r in records.values())  # retried, not failed
    assert len(result_lines(out)) == len(probes)


async def test_a_worker_killed_four_times_does_not_stop_the_run(ray_executor, probes, tmp_path, scripted_path):
    out = tmp_path / "run"
    executor = ray_executor(spec_for(out, "scripted:slow_line_then_yes"), workers=2, concurrency=4)
    killed: list[int] = []

    def kill_first_worker_again(record) -> None:
        if len(killed) < 4:  # waits for the restarted worker, so each kill lands on a new process
            killed.append(ray.get(executor.actors[0].pid.remote()))
            os.kill(killed[-1], signal.SIGKILL)

    records = await run_in_process(probes, out, executor, kill_first_worker_again, model="slow_line_then_yes")
    assert len(set(killed)) == 4, killed
    assert sorted(records) == sorted(s.id for s in probes)
    assert all(r["answer"] == "yes" and r["error"] is None for r in records.values())
    assert len(result_lines(out)) == len(probes)


async def test_a_worker_that_cannot_open_fails_the_run_with_its_reason_and_nothing_to_close(ray_executor, probes,
                                                                                          tmp_path, scripted_path,
                                                                                          capsys):
    """Opening the worker (here its backend) fails in every actor: the run stops naming why, and closing the
    actors, whose worker never opened, reports nothing more."""
    from dataclasses import replace

    out = tmp_path / "run"
    executor = ray_executor(replace(spec_for(out), backend="no-such-backend"), workers=2, concurrency=4)
    with pytest.raises(ExecutorFailed, match="no-such-backend"):
        await run_in_process(probes, out, executor)
    assert executor.actors == [] and "not closed cleanly" not in capsys.readouterr().err


def test_tasks_are_submitted_in_a_window_not_all_at_once(ray_executor, probes, tmp_path, scripted_path):
    """The driver holds WINDOW tasks per sample in flight (here 2 actors x 1), not one per sample of the batch."""
    from trompe_agents.executors.ray_executor import WINDOW

    out = tmp_path / "run"
    executor = ray_executor(spec_for(out, "scripted:slow_line_then_yes"), workers=2, concurrency=2)
    held = []
    owned = ray._private.worker.global_worker.core_worker.get_all_reference_counts
    gc.collect()
    # what the driver already holds: an earlier test's failed run keeps its tasks' references alive in the
    # traceback pytest keeps (4 of them once made this run read 8)
    before = len(owned())

    def count_tasks(record) -> None:  # objects the driver owns: the results of the tasks it has submitted
        held.append(len(owned()) - before)

    records = asyncio.run(run_in_process(probes, out, executor, count_tasks, model="slow_line_then_yes"))
    assert sorted(records) == sorted(s.id for s in probes)
    assert max(held) <= 2 * WINDOW < len(probes), held


def test_driver_killed_with_sigkill_resumes(ray_cluster, gated_run, probe_dir, probes):
    out = gated_run
    flags = ("--executor", "ray", "--ray-address", ray_cluster, "--workers", "2")
    proc = run_cli(probe_dir, out, *flags)  # the gated model: after three answers the actors wait for the gate
    while len(result_lines(out)) < 2 and proc.poll() is None:  # no deadline: the gate, not the clock, holds the
        time.sleep(0.02)  # run mid-way, and Ray's start alone takes minutes at a load of 30 (the timeout: a hang)
    proc.send_signal(signal.SIGKILL)
    _, stderr = proc.communicate()
    before = [json.loads(line) for line in result_lines(out)]
    assert 2 <= len(before) < len(probes), f"the kill should land mid-run:\n{stderr.decode()[-3000:]}"

    gate(out).touch()
    proc = run_cli(probe_dir, out, *flags)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr.decode()
    after = [json.loads(line) for line in result_lines(out)]
    assert sorted(r["id"] for r in after) == sorted(s.id for s in probes)  # each sample exactly once
    assert after[: len(before)] == before
    assert len(read_meta(out)["invocations"]) == 2
