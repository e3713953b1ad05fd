"""Every request each backend's official SDK puts on the wire, with thinking on and off and with `--keep-images 1`
and `all`, compared field by field with the vendor's documented request (wire_shapes.py cites the API reference
pages): no field, type or value the page does not list, the thinking setting the vendor documents for the model,
tool-result images where the vendor's native way puts them, and earlier rounds' images as stubs naming their ids.

The bodies are the real HTTP requests the SDKs send to the loopback fake vendor, over a three-round agent loop that
crops with the real tools of an in-process trompe server. The Anthropic fake answers 400 to a thinking block whose
prefix changed (preserved thinking), so the Claude runs also prove `--keep-images` leaves echoed thinking valid.
"""

from __future__ import annotations

import base64
import re

import pytest
from imagekit import gradient
from test_vendor_roundtrip import BOX, SCHEMA, VENDORS, backend_for
from trompe_agents.backends.catalogue import DEFAULTS
from trompe_agents.loop import run_agent
from trompe_agents.testing import FakeVendor, Reply, call
from wire_shapes import snake, undocumented

ROUNDS = 3  # crops, each answered with a new image, before the final answer
SCRIPT = [Reply(thinking=f"step {n}", calls=call("crop", image="original", box=BOX).calls) for n in range(ROUNDS)] \
    + [Reply(thinking="done", text='```json\n{"answer": "no"}\n```')]
BACKEND = {"claude": "claude", "openai": "openai", "openai-chat": "openai-chat", "gemini-3": "gemini"}
STUB = re.compile(r"\[image (img_\d+) from an earlier round is not repeated here")


def thinking_sent(label: str, body: dict) -> object:
    """The request's thinking setting, in the vendor's own fields (Gemini's keys in camelCase, as documented)."""
    if label == "claude":
        return body.get("thinking"), body.get("output_config", {}).get("effort")
    if label == "openai":
        return body.get("reasoning")
    if label == "openai-chat":
        return body.get("reasoning_effort")
    config = body.get("generationConfig", {}).get("thinkingConfig", {})
    return {re.sub(r"_([a-z])", lambda m: m[1].upper(), k): v for k, v in config.items()}


# what each default model's page documents for --thinking high / off (models.toml cites them):
# Sonnet 5.5 has no `disabled` (its lowest is between_tools, with effort low; adaptive display summarized shows
# the narration); GPT-6.1 takes `none`; on Chat Completions GPT-6.x refuses function tools unless the effort is
# `none`, whatever was asked; Gemini 3.8 Flash has no MINIMAL level, so off is LOW.
THINKING = {
    "claude": {"high": ({"type": "adaptive", "display": "summarized"}, "high"),
               "off": ({"type": "between_tools"}, "low")},
    "openai": {"high": {"effort": "high"}, "off": {"effort": "none"}},
    "openai-chat": {"high": "none", "off": "none"},
    "gemini-3": {"high": {"thinkingLevel": "HIGH"}, "off": {"thinkingLevel": "LOW"}},
}


def png(value: str) -> bool:
    data = value.removeprefix("data:image/png;base64,")
    return data[:8] == "iVBORw0K" and base64.b64decode(data[:12])[:4] == b"\x89PNG"


def strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def tool_result_images(label: str, body: dict) -> int:
    """The PNGs sent back as tool results, counted only where the vendor's native way puts them (Chat Completions
    has none: a `user` message right after the `tool` messages carries them)."""
    if label == "claude":
        results = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
                   if b["type"] == "tool_result"]
        parts = [c["source"]["data"] for r in results for c in r.get("content", []) if c["type"] == "image"]
    elif label == "openai":
        outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
        parts = [o["image_url"] for i in outputs for o in i["output"] if o["type"] == "input_image"]
    elif label == "openai-chat":
        after_tool = [m for before, m in zip(body["messages"], body["messages"][1:])
                      if before["role"] == "tool" and m["role"] == "user"]
        parts = [c["image_url"]["url"] for m in after_tool for c in m["content"] if c["type"] == "image_url"]
    else:
        responses = [p.get("functionResponse") or p.get("function_response") for c in body["contents"]
                     for p in c["parts"]]
        parts = [(b.get("inlineData") or b.get("inline_data"))["data"] for r in responses if r
                 for b in r.get("parts", [])]
    assert all(png(p) for p in parts)
    return len(parts)


@pytest.mark.parametrize("keep", [1, None], ids=["keep-images-1", "keep-images-all"])
@pytest.mark.parametrize("thinking", ["high", "off"], ids=["thinking-on", "thinking-off"])
@pytest.mark.parametrize("label", list(BACKEND))
async def test_every_request_matches_the_vendors_documented_shape(label, thinking, keep, tools, tmp_path):
    gradient(64, 48).save(tmp_path / "q.png")
    kind = VENDORS[label][1]
    with FakeVendor(kind, SCRIPT) as fake:
        async with backend_for(label, fake, model=DEFAULTS[BACKEND[label]], thinking=thinking,
                               keep_images=keep) as backend:
            result = await run_agent(backend, tools, system="You inspect images.", question="Is it dark?",
                                     images={"original": tmp_path / "q.png"}, final_schema=SCHEMA, max_rounds=6)
    assert result.answer == {"answer": "no"} and len(fake.requests) == ROUNDS + 1
    for n, request in enumerate(fake.requests):
        assert undocumented(kind, request.json) is None, f"request {n + 1}: {undocumented(kind, request.json)}"
        assert thinking_sent(label, request.json) == THINKING[label][thinking]

    last = fake.requests[-1].json
    kept = ROUNDS if keep is None else keep
    assert tool_result_images(label, last) == kept
    assert sum(png(s) for s in strings(last)) == 1 + kept  # the question's own image is never stubbed
    stubbed = [m[1] for s in strings(last) for m in STUB.finditer(s)]
    assert stubbed == [f"img_{n:03d}" for n in range(1, ROUNDS - kept + 1)]


def test_the_documented_shapes_refuse_what_the_pages_do_not_list():
    """The schemas are not vacuous: a field the page does not list, a wrong type or value, or an image where the
    vendor takes none is named with its path."""
    claude = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    assert undocumented("anthropic", claude) is None
    assert "temperatur" in undocumented("anthropic", {**claude, "temperatur": 0})
    assert undocumented("anthropic", {**claude, "thinking": {"type": "enabled", "budget_tokens": 10}})
    chat_image_in_tool = {"model": "m", "messages": [{"role": "tool", "tool_call_id": "c", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]}]}
    assert undocumented("chat", chat_image_in_tool)
    assert undocumented("responses", {"model": "m", "input": "hi", "reasoning": {"effort": "extreme"}})
    part = {"text": "hi"}
    assert undocumented("gemini", {"contents": [{"role": "user", "parts": [part]}]}) is None
    assert undocumented("gemini", {"contents": [{"role": "user", "parts": [{**part, "inlineData": {
        "mimeType": "image/png", "data": "AA=="}}]}]})  # a Part holds one kind of data
    assert undocumented("gemini", {"contents": [{"parts": [{"inline_data": {"mime_type": "image/png",
                                                                            "data": "AA=="}}]}]}) is None
    assert snake("thinkingLevel") == "thinking_level"
