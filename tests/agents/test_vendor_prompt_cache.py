"""The rolling prompt cache: by default the hosted backends keep every image, so each request is the previous one
plus a round, and mark it for the vendor's prefix cache (Claude: top-level `cache_control`; OpenAI: one
`prompt_cache_key`); hf keeps eliding. bench/image_tokens.py measured this cheaper than K=2 elision on every vendor.

Anthropic's rules (platform.claude.com/docs/en/build-with-claude/prompt-caching): a top-level `cache_control` puts
the breakpoint on the request's last cacheable block; at most 4 breakpoints per request (the fake refuses a fifth).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

import anthropic
import pytest
from imagekit import gradient
from test_vendor_roundtrip import BOX, SCHEMA, tool_result_images
from test_vendor_rules import BACKENDS
from trompe_agents.backends.catalogue import DEFAULT_KEEP_ROUNDS, DEFAULTS
from trompe_agents.cliopts import add_backend_args, backend_options_from_args
from trompe_agents.loop import run_agent
from trompe_agents.testing import FakeVendor, call, final
from trompe_agents.toolclient import ToolClient

CACHE = {"type": "ephemeral"}
ROUNDS = 4  # tool rounds before the answer


def cli_options(backend: str, fake: FakeVendor, *extra: str):
    """The options a user gets from the command line, defaults included."""
    parser = argparse.ArgumentParser()
    add_backend_args(parser)
    args = parser.parse_args(["--backend", backend, "--base-url", fake.base_url, "--max-retries", "0", *extra])
    return backend_options_from_args(args, "test")


def images_in(value) -> int:
    """Images anywhere in a request body, in any vendor's shape (Claude, Chat, Responses)."""
    if isinstance(value, list):
        return sum(images_in(v) for v in value)
    if not isinstance(value, dict):
        return 0
    return (value.get("type") in ("image", "image_url", "input_image")) + sum(images_in(v) for v in value.values())


def unmarked(value):
    """A request part without its cache breakpoints (they mark where to cache, not what)."""
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    return value


async def run_rounds(name: str, tools: ToolClient, tmp_path, monkeypatch, *extra: str) -> FakeVendor:
    """A sample of ROUNDS crop calls and an answer, against the fake, with the command line's options."""
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(variable, "k")
    image = tmp_path / "q.png"
    gradient(64, 48).save(image)
    script = [call("crop", image="original", box=BOX)] * ROUNDS + [final('{"answer": "no"}')]
    cls, kind = BACKENDS[name]
    with FakeVendor(kind, script) as fake:
        options = replace(cli_options(name, fake, *extra), model=DEFAULTS[name])
        async with cls(options) as backend:
            result = await run_agent(backend, tools, system="You inspect images.", question="Is it dark?",
                                     images={"original": image}, final_schema=SCHEMA, max_rounds=ROUNDS + 2)
    assert result.stop == "answer", result.error
    return fake


@pytest.mark.parametrize("name", ["claude", "openai", "openai-chat", "gemini"])
def test_hosted_backends_keep_every_image_by_default_and_hf_still_elides(name):
    with FakeVendor("anthropic") as fake:
        assert cli_options(name, fake).keep_images is None
        assert cli_options(name, fake, "--keep-images", "2").keep_images == 2
        assert cli_options("hf", fake).keep_images == DEFAULT_KEEP_ROUNDS


async def test_claude_marks_a_rolling_breakpoint_and_resends_every_image(tools, tmp_path, monkeypatch):
    fake = await run_rounds("claude", tools, tmp_path, monkeypatch)
    bodies = fake.bodies
    assert [b.get("cache_control") for b in bodies] == [CACHE] * (ROUNDS + 1)
    for body in bodies:  # system and tools stay marked
        assert body["system"][-1]["cache_control"] == CACHE and body["tools"][-1]["cache_control"] == CACHE
    assert "cache_control" not in bodies[0]["messages"][0]["content"][-1]  # the automatic breakpoint covers it
    assert len(tool_result_images("claude", bodies[-1])) == ROUNDS  # no image was elided
    for before, after in zip(bodies, bodies[1:]):  # each request starts with the whole previous one ...
        assert json.dumps(after).count('"cache_control"') == 4  # system, tools, previous end, automatic: the most
        n = len(before["messages"])
        assert unmarked(after["messages"][:n]) == unmarked(before["messages"])
        assert after["messages"][n - 1]["content"][-1]["cache_control"] == CACHE  # ... and marks where it ended


async def test_claude_with_elision_marks_only_the_stable_prefix(tools, tmp_path, monkeypatch):
    fake = await run_rounds("claude", tools, tmp_path, monkeypatch, "--keep-images", "2")
    last = fake.bodies[-1]
    assert "cache_control" not in last and last["messages"][0]["content"][-1]["cache_control"] == CACHE
    assert len(tool_result_images("claude", last)) == 2


@pytest.mark.parametrize("name", ["openai", "openai-chat"])
async def test_openai_sends_one_cache_key_and_every_image(name, tools, tmp_path, monkeypatch):
    fake = await run_rounds(name, tools, tmp_path, monkeypatch)
    keys = {b.get("prompt_cache_key") for b in fake.bodies}
    assert len(keys) == 1 and None not in keys
    assert images_in(fake.bodies[-1]) == ROUNDS + 1  # the question's image and every tool image


def test_the_anthropic_fake_refuses_a_fifth_cache_breakpoint():
    with FakeVendor("anthropic") as fake:
        client = anthropic.Anthropic(api_key="k", base_url=fake.base_url, max_retries=0)
        marked = [{"type": "text", "text": f"part {i}", "cache_control": CACHE} for i in range(4)]
        with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks with cache_control"):
            client.messages.create(model="claude-sonnet-5-5", max_tokens=10, cache_control=CACHE,
                                   messages=[{"role": "user", "content": marked}])
        client.messages.create(model="claude-sonnet-5-5", max_tokens=10, cache_control=CACHE,
                               messages=[{"role": "user", "content": marked[1:]}])
