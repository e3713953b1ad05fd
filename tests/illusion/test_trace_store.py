"""A run keeps each distinct image once: samples that show the same picture share one stored file."""

import os

from trompe_agents.backends.function import FunctionBackend
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.toolclient import ToolClient

from .scripted import line_then_yes


async def test_samples_showing_the_same_image_store_it_once(probes, tmp_path):
    same = probes[:3]
    for sample in same[1:]:
        sample.images = list(same[0].images)  # three questions about one picture, as datasets often ask
    out = tmp_path / "run"
    async with ToolClient.in_process() as tools:
        await run_samples(same, FunctionBackend(line_then_yes), tools, AgentConfig(task=1),
                          RunOptions(out=out, concurrency=1, progress=False))
    originals = [out / "traces" / s.id / "images" / "original.png" for s in same]
    assert len({p.read_bytes() for p in originals}) == 1  # every trace still shows the picture
    assert len({os.stat(p).st_ino for p in originals}) == 1  # ... from one file on disk
    stored = list((out / "traces" / ".images").iterdir())
    assert os.stat(originals[0]).st_nlink == 1 + len(same)
    assert len(stored) == len({f.read_bytes() for f in stored})  # nothing stored twice
