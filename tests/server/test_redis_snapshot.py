"""A Redis that comes back with older state: the session is there, its newest images are not.

What RDB persistence, `appendfsync everysec` after a crash or a failover to a lagging replica give. A real
redis-server with RDB persistence is saved, an image is stored after the save, and it is killed with SIGKILL
and restarted from that save in the middle of a sample. The sample must fail as tool_infrastructure (never be
answered from the loss shown to the model as its own mistake) and one --retry-errors must answer it.
"""

from __future__ import annotations

import re

import pytest
from mcp.shared.exceptions import MCPError

from imagekit import gradient, png_bytes
from rediskit import RedisServer, line_samples
from runlines import as_lines
from trompe_agents.backends.function import FunctionBackend, tool_call
from trompe_agents.illusion.agent import AgentConfig
from trompe_agents.illusion.runner import run_samples
from trompe_agents.illusion.runoptions import RunOptions
from trompe_agents.toolclient import ToolClient, ToolInfrastructureError
from trompe_server.app import ServerConfig

pytestmark = pytest.mark.slow  # a Redis of its own, restarted mid-run
CONFIG = AgentConfig(task=1, router="regex", tags=["core"], allow=["crop"])
STRUCK = "s1"  # the sample in whose middle Redis loses its newest image


@pytest.fixture
def snapshot_redis(tmp_path):
    server = RedisServer(tmp_path, snapshots=True)
    server.start()
    yield server
    server.stop()


def restart_from_save(redis: RedisServer) -> None:
    """kill -9 and start again: Redis comes back with the state of its last SAVE."""
    redis.proc.kill()
    redis.proc.wait()
    redis.start()


class CropThenAgain:
    """Crops the original (img_001), then crops `second`, then answers 'yes' when the crops came back as img_001
    and img_002. Shown a tool error it answers 'no': the wrong answer of an agent the infrastructure misled.

    In sample STRUCK, Redis is saved before the first crop and restarted from that save after it."""

    def __init__(self, redis: RedisServer, second: str):
        self.redis, self.second, self.struck = redis, second, False

    def __call__(self, messages, tools):
        results = [m for m in messages if m.role == "tool"]
        sample = re.search(r"sample (s\d+)", messages[1].text).group(1)
        if any(m.is_error for m in results):
            return {"reasons": "a tool failed", "answer": "no"}
        if not results:
            if sample == STRUCK and not self.struck:
                with self.redis.client() as r:
                    r.save()  # the snapshot: the session with its original only
            return tool_call("crop", image="original", box=[0, 0, 12, 12])
        if len(results) == 1:
            if sample == STRUCK and not self.struck:
                self.struck = True
                restart_from_save(self.redis)  # img_001 was stored after the save: the restart loses it
            return tool_call("crop", image=self.second, box=[0, 0, 8, 8])
        made = [p.id for m in results for p in m.images]
        return {"reasons": f"made {made}", "answer": "yes" if made == ["img_001", "img_002"] else "no"}


@pytest.mark.parametrize("second", ["img_001", "original"], ids=["asks-for-the-lost-image", "gets-its-id-again"])
async def test_images_lost_to_an_older_snapshot_fail_the_sample_and_a_retry_answers_it(snapshot_redis, tmp_path,
                                                                                     second):
    """Asking for the lost img_001 gets "unknown image" from the server; cropping the original again gets
    img_001 a second time (the session's counter went back too): either is the server's loss, not the model's."""
    samples, out = line_samples(tmp_path, 4), tmp_path / "run"
    model = CropThenAgain(snapshot_redis, second)
    async with ToolClient.in_process(ServerConfig(registry=snapshot_redis.url)) as tools:
        options = RunOptions(out=out, concurrency=1, progress=False)
        first = as_lines(await run_samples(samples, FunctionBackend(model, "scripted"), tools, CONFIG, options))
        assert model.struck
        lost = first[STRUCK]
        assert (lost["answer"], lost["error_kind"]) == (None, "tool_infrastructure"), lost
        assert "the tool server lost images it had stored for this sample" in lost["error"]
        assert all(r["answer"] == "yes" for i, r in first.items() if i != STRUCK)  # never 'no'
        again = RunOptions(out=out, concurrency=1, progress=False, retry_errors=True)
        retried = as_lines(await run_samples(samples, FunctionBackend(model, "scripted"), tools, CONFIG, again))
        clean_model = CropThenAgain(snapshot_redis, second)
        clean_model.struck = True  # the same run with nothing lost
        clean_options = RunOptions(out=tmp_path / "clean", concurrency=1, progress=False)
        clean = as_lines(await run_samples(samples, FunctionBackend(clean_model, "scripted"), tools, CONFIG,
                                           clean_options))
    assert {i: (r["answer"], r["error_kind"], r["tool_calls"]) for i, r in retried.items()} == {
        s.id: ("yes", None, ["crop", "crop"]) for s in samples}
    fields = ("answer", "correct", "error_kind", "tool_calls", "refused_calls", "agent", "rounds")
    assert {i: [r[f] for f in fields] for i, r in retried.items()} == {
        i: [r[f] for f in fields] for i, r in clean.items()}  # the run as a clean one writes it


@pytest.mark.parametrize("mcp", [False, True], ids=["in-process", "over-MCP"])
async def test_reading_an_image_lost_to_an_older_snapshot_is_the_servers_failure(snapshot_redis, mcp):
    """The full-size read of an image the server made (image://, as a sample's first turn, the rescue agent and
    sevex's ask_lvlm read them) fails as tool infrastructure once Redis came back without it; reading an id the
    server never made is still refused as the caller's."""
    async with ToolClient.in_process(ServerConfig(registry=snapshot_redis.url), mcp=mcp) as tools:
        info = await tools.open_session({"original": png_bytes(gradient())})
        with snapshot_redis.client() as r:
            r.save()
        crop = await tools.call(info.id, "crop", {"image": "original", "box": [0, 0, 12, 12]})
        assert crop.structured["image"] == "img_001"
        with pytest.raises(MCPError):
            await tools.image_png(info.id, "img_007")
        restart_from_save(snapshot_redis)
        with pytest.raises(ToolInfrastructureError) as lost:
            await tools.image_png(info.id, "img_001")
        assert lost.value.failure == "lost"
        assert "the tool server lost images it had stored for this sample (it no longer has img_001)" in str(
            lost.value)
        await tools.close_session(info.id)


async def test_an_image_the_model_invented_is_still_its_own_mistake(redis_url):
    """An unknown id the server never handed out is the model's error, shown to it as before."""
    async with ToolClient.in_process(ServerConfig(registry=redis_url)) as tools:
        info = await tools.open_session({"original": png_bytes(gradient())})
        result = await tools.call(info.id, "crop", {"image": "img_007", "box": [0, 0, 4, 4]})
        assert result.is_error and "unknown image 'img_007'" in result.text
        await tools.close_session(info.id)

