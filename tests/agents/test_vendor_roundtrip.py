"""Each vendor backend through its real SDK against a loopback fake API, running real tools on a trompe server."""

from __future__ import annotations

import base64
import io
import json

import pytest
from imagekit import gradient
from PIL import Image
from trompe_agents.backends.base import BackendOptions
from trompe_agents.backends.claude import ClaudeBackend
from trompe_agents.backends.gemini import GeminiBackend
from trompe_agents.backends.openai_chat import OpenAIChatBackend
from trompe_agents.backends.openai_responses import OpenAIResponsesBackend
from trompe_agents.loop import run_agent
from trompe_agents.messages import Message, TextPart, Usage
from trompe_agents.testing import FakeVendor, Reply, Tokens, call, final

# label -> (backend class, fake vendor kind, model)
VENDORS = {
    "claude": (ClaudeBackend, "anthropic", "claude-test"),
    "openai": (OpenAIResponsesBackend, "responses", "gpt-test"),
    "openai-chat": (OpenAIChatBackend, "chat", "local-vlm"),
    "gemini-3": (GeminiBackend, "gemini", "gemini-3-flash-preview"),
    "gemini-2.5": (GeminiBackend, "gemini", "gemini-2.5-flash-lite"),
}
SCHEMA = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}}, "required": ["answer"],
          "additionalProperties": False}
BOX = [8, 4, 24, 20]


def backend_for(label: str, fake: FakeVendor, settings: dict | None = None, **options):
    """The backend against the fake vendor; `settings`: its own, as `--backend-option` pairs."""
    cls, _, model = VENDORS[label]
    return cls(BackendOptions(model=options.pop("model", model), base_url=fake.base_url, api_key="test-key",
                              settings=cls.Settings.from_pairs(settings or {}), **options))


def from_data_url(url: str) -> bytes:
    head, data = url.split(",", 1)
    assert head == "data:image/png;base64", head
    return base64.b64decode(data)


def tool_result_images(label: str, body: dict) -> list[bytes]:
    """The PNGs a request sends back as tool-result images, found only where the vendor's native way puts them."""
    if label == "claude":
        results = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
        return [base64.b64decode(c["source"]["data"]) for r in results for c in r["content"] if c["type"] == "image"]
    if label == "openai":
        outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
        return [from_data_url(o["image_url"]) for r in outputs for o in r["output"] if o["type"] == "input_image"]
    if label == "openai-chat":
        messages = body["messages"]
        at = next(i for i, m in enumerate(messages) if m["role"] == "tool")
        assert isinstance(messages[at]["content"], str) and "img_001 (attached below)" in messages[at]["content"]
        trailing = messages[at + 1]
        assert trailing["role"] == "user"
        return [from_data_url(p["image_url"]["url"]) for p in trailing["content"] if p["type"] == "image_url"]
    turn = body["contents"][-1]
    responses = [p["functionResponse"] for p in turn["parts"] if "functionResponse" in p]
    assert responses and responses[0]["name"] == "crop"
    inline = [base64.urlsafe_b64decode(p["inlineData"]["data"]) for p in turn["parts"] if "inlineData" in p]
    nested = [base64.urlsafe_b64decode(q["inline_data"]["data"]) for r in responses for q in r.get("parts", [])]
    if label == "gemini-3":
        assert not inline, "Gemini 3 gets images inside the function response, not beside it"
        return nested
    assert not nested, "Gemini 2.x gets the documented fallback: image parts after the function response"
    first_image = next(i for i, p in enumerate(turn["parts"]) if "inlineData" in p)
    assert all("functionResponse" in p for p in turn["parts"][:1]) and first_image > 0
    return inline


@pytest.mark.parametrize("label", list(VENDORS))
async def test_crop_result_reaches_the_model_natively_and_the_answer_parses(label, tools):
    info = await tools.open_session({"original": _png(gradient(64, 48))})
    schemas = await tools.list_tools()
    script = [call("crop", image="original", box=BOX), final('{"answer": "yes"}')]
    with FakeVendor(VENDORS[label][1], script) as fake:
        async with backend_for(label, fake) as backend:
            turn, answer = await crop_then_answer(backend, tools, info.id, schemas)
        [png] = tool_result_images(label, fake.requests[1].json)
    assert Image.open(io.BytesIO(png)).tobytes() == gradient(64, 48).crop(BOX).tobytes()
    assert png == await tools.image_png(info.id, "img_001")
    assert json.loads(answer.message.text) == {"answer": "yes"}
    assert not answer.message.tool_calls


async def crop_then_answer(backend, tools, session, schemas):
    """Two model turns with a real crop in between, as the agent loop would run them."""
    messages = [Message("system", [TextPart("You inspect images.")]),
                Message("user", [TextPart("Is the top-left corner dark?")])]
    turn = await backend.complete(messages, schemas, final_schema=SCHEMA)
    [tool_call] = turn.message.tool_calls
    assert (tool_call.name, tool_call.arguments) == ("crop", {"image": "original", "box": BOX})
    result = await tools.call(session, tool_call.name, tool_call.arguments)
    assert not result.is_error, result.text
    messages += [turn.message, result.to_message(tool_call.id, tool_call.name)]
    return turn, await backend.complete(messages, schemas, final_schema=SCHEMA)


@pytest.mark.parametrize("label", list(VENDORS))
async def test_usage_is_mapped_from_each_vendors_fields(label):
    tokens = Tokens(input=1200, output=30, reasoning=12, cached=400, image=258)
    with FakeVendor(VENDORS[label][1], [Reply(text="hi", usage=tokens)]) as fake:
        async with backend_for(label, fake) as backend:
            turn = await backend.complete([Message("user", [TextPart("hi")])], [])
    image_reported = label in ("openai-chat", "gemini-3", "gemini-2.5")  # the others have no image count
    assert turn.usage == Usage(input_tokens=1200, output_tokens=30, reasoning_tokens=12, cached_tokens=400,
                               image_tokens=258 if image_reported else None)
    assert turn.usage.total == 1242


@pytest.mark.parametrize("label", list(VENDORS))
async def test_agent_loop_end_to_end(label, tools, tmp_path):
    question = tmp_path / "q.png"
    gradient(64, 48).save(question)
    script = [call("crop", image="original", box=BOX, zoom=2), final('Dark.\n```json\n{"answer": "no"}\n```')]
    with FakeVendor(VENDORS[label][1], script) as fake:
        async with backend_for(label, fake) as backend:
            result = await run_agent(backend, tools, system="You inspect images.",
                                     question="Is the top-left corner dark?", images={"original": question},
                                     final_schema=SCHEMA, max_rounds=4)
        assert (result.stop, result.answer, result.tool_calls) == ("answer", {"answer": "no"}, ["crop"])
        [png] = tool_result_images(label, fake.requests[1].json)
    assert Image.open(io.BytesIO(png)).size == (32, 32)
    assert result.usage.input_tokens == 2 * Tokens().input


def _png(im: Image.Image) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()
