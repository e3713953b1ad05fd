"""A full disk is transient: the run stops, the samples it cut short are not counted as done and are retried on
resume."""

from __future__ import annotations

import errno

import pytest

from trompe_agents.backends.function import FunctionBackend
from trompe_agents.illusion.agent import AgentConfig
from runlines import written
from trompe_agents.illusion.runner import RunFolderUnwritable, run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.toolclient import ToolClient

from .scripted import line_then_yes


def disk_full(messages, tools):
    raise OSError(errno.ENOSPC, "No space left on device")


async def test_samples_cut_short_by_a_full_disk_are_retried_on_resume(probes, tmp_path):
    out = tmp_path / "run"
    async with ToolClient.in_process() as tools:
        with pytest.raises(RunFolderUnwritable):
            await run_samples(probes[:2], FunctionBackend(disk_full, "scripted"), tools, AgentConfig(task=1),
                              RunOptions(out=out, progress=False))
        assert {r["error_kind"] for r in written(out).values()} == {"disk_full"}
        again = await run_samples(probes[:2], FunctionBackend(line_then_yes, "scripted"), tools, AgentConfig(task=1),
                                  RunOptions(out=out, progress=False))
    assert [again[s.id].answer for s in probes[:2]] == ["yes", "yes"]
