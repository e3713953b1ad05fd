"""DataCV submission files: one `<index> <answer>` line per sample, in dataset order, -1 without answer."""

import re

import pytest

from trompe_agents.backends.function import FunctionBackend
from trompe_agents.datasets.base import Sample
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.illusion.submit import datacv_code, write_submission
from trompe_agents.toolclient import ToolClient


def test_codes_per_task():
    assert [datacv_code(a, 1) for a in ("yes", "no", None)] == ["1", "0", "-1"]
    assert [datacv_code(a, 2) for a in ("A", "B", "C", "D", None, "E")] == ["0", "1", "2", "3", "-1", "-1"]


async def test_task2_submission_in_dataset_order_with_missing_answers(tmp_path, probe_dir):
    image = next((probe_dir / "images").iterdir())
    letters = "ABCD"
    samples = [Sample(str(100 + i), [image], f"Option {letters[i % 4]}?", choices=["w", "x", "y", "z"],
                      metadata={"index": 100 + i}) for i in range(6)]
    samples[3].images = [tmp_path / "missing.png"]  # this one errors: -1

    def pick(messages, tools):
        return {"reasons": "r", "answer": re.search(r"Option (\w)", messages[1].text).group(1)}

    out = tmp_path / "run"
    async with ToolClient.in_process() as tools:
        await run_samples(samples, FunctionBackend(pick), tools, AgentConfig(task=2),
                          RunOptions(out=out, concurrency=3, limit=5, progress=False))
    path = write_submission(out, "datacv")
    rows = path.read_text().splitlines()
    assert rows == ["100 0", "101 1", "102 2", "103 -1", "104 0", "105 -1"]  # 105 was never run (limit)
    assert all(re.fullmatch(r"\d+ (-1|[0-3])", row) for row in rows)
    with pytest.raises(ValueError, match="format must be one of datacv"):
        write_submission(out, "csv")
