"""The illusion agent in Inspect through Inspect's own providers, against trompe's loopback fake vendors: the tools
are called and the images (the input and each tool result) reach the vendor in its native form."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
import pytest
from PIL import Image

from trompe_agents.testing import dataset_files as files
from trompe_agents.testing.fake_vendors import FakeVendor, call, final, tool_results

# fake vendor kind -> Inspect model name and model args (Anthropic: no streaming, the fake answers in one body)
PROVIDERS = {"anthropic": ("anthropic/claude-sonnet-4-5", {"streaming": False}),
             "chat": ("openai-api/fake/vlm", {}),
             "gemini": ("google/gemini-2.5-pro", {}),
             "responses": ("openai/gpt-4o", {"responses_api": True})}


def native_images(node: Any) -> list[bytes]:
    """Every image a request body carries, in whichever vendor's own shape: Anthropic `source.data`, Chat
    Completions `image_url.url` and Responses `input_image` data URLs, Gemini `inlineData.data`."""
    found: list[bytes] = []
    if isinstance(node, dict):
        if node.get("type") == "image" and isinstance(node.get("source"), dict):
            found.append(base64.b64decode(node["source"]["data"]))
        elif node.get("type") == "image_url":
            found.append(base64.b64decode(node["image_url"]["url"].split(",", 1)[1]))
        elif node.get("type") == "input_image":
            found.append(base64.b64decode(node["image_url"].split(",", 1)[1]))
        elif isinstance(node.get("inlineData") or node.get("inline_data"), dict):  # google-genai: URL-safe base64
            found.append(base64.urlsafe_b64decode((node.get("inlineData") or node.get("inline_data"))["data"]))
        else:
            for value in node.values():
                found += native_images(value)
    elif isinstance(node, list):
        for value in node:
            found += native_images(value)
    return found


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
async def test_illusion_agent_through_inspect_providers(kind, tmp_path):
    from inspect_ai import eval_async
    from inspect_ai.model import get_model

    def script(body, n):
        if not body.get("tools"):  # the classification request
            return final('{"category": "line length"}')
        if tool_results(kind, body):
            return final('{"reasons": "the crop shows equal lines", "answer": "yes"}')
        return call("crop", image="original", box=[0, 0, 8, 8], zoom=2)

    dataset = files.write_datacv1(tmp_path / "data", 1, answers=True)
    name, args = PROVIDERS[kind]
    with FakeVendor(kind, script) as vendor:
        model = get_model(name, base_url=vendor.base_url, api_key="test", **args)
        [log] = await eval_async("trompe/datacv_task1", task_args={"dataset": str(dataset)}, model=model,
                                 log_dir=str(tmp_path / "logs"), max_tokens=4096)
    assert log.status == "success", log.error
    record = log.samples[0].store["trompe_record"]
    assert (record["answer"], record["tool_calls"], record["route"]) == ("yes", ["crop"], "line length")
    first, last = vendor.bodies[1], vendor.bodies[-1]  # the agent's first turn, and its turn after the crop
    original = pixels((tmp_path / "data" / "test" / "0.png").read_bytes())
    [shown] = native_images(first)
    assert np.array_equal(pixels(shown), original)  # exact pixels: lossless all the way
    before, crop = native_images(last)
    assert np.array_equal(pixels(before), original)
    assert np.array_equal(pixels(crop), original[:8, :8].repeat(2, axis=0).repeat(2, axis=1))  # zoom 2
