"""The fake vendor servers other packages' tests build on: scripts, key styles, faults, errors they report."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from test_vendor_roundtrip import VENDORS, backend_for
from trompe_agents.backends.base import BackendError
from trompe_agents.messages import Message, TextPart, ToolSchema
from trompe_agents.testing import FakeVendor, call, final, tool_results

CROP = ToolSchema("crop", "Cut out a box.", {"type": "object", "properties": {}})


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("label", ["claude", "openai", "openai-chat", "gemini-3"])
async def test_a_callable_script_sees_each_request_and_can_react_to_tool_results(label):
    kind = VENDORS[label][1]
    seen = []

    def script(body, n):
        seen.append(n)
        return final(f"saw {len(tool_results(kind, body))} results") if tool_results(kind, body) else call("crop")

    with FakeVendor(kind, script) as fake:
        async with backend_for(label, fake) as backend:
            messages = [Message("user", [TextPart("go")])]
            turn = await backend.complete(messages, [CROP])
            result = Message("tool", [TextPart("img_001")], tool_call_id=turn.message.tool_calls[0].id,
                             tool_name="crop")
            answer = await backend.complete([*messages, turn.message, result], [CROP])
    assert answer.message.text == "saw 1 results" and seen == [0, 1]


def test_gemini_fake_accepts_snake_and_camel_case_and_reads_the_model_from_the_path():
    with FakeVendor("gemini") as fake:
        for key in ("functionResponse", "function_response"):
            body = {"contents": [{"role": "user", "parts": [{key: {"name": "crop", "response": {"output": "x"}}}]}]}
            status, reply = post(f"{fake.url}/v1beta/models/gemini-3-pro:generateContent", body)
            assert status == 200 and reply["candidates"][0]["content"]["parts"] == [{"text": '{"answer": "yes"}'}]
            assert tool_results("gemini", body) == [{"name": "crop", "response": {"output": "x"}}]
        assert [r.model for r in fake.requests] == ["gemini-3-pro", "gemini-3-pro"]


def test_quota_and_rate_limit_bodies_are_the_vendors_own():
    with FakeVendor("responses") as fake:
        assert post(fake.base_url + "/responses", {"model": "quota"})[1]["error"]["code"] == "insufficient_quota"
        assert post(fake.base_url + "/responses", {"model": "ratelimit"})[1]["error"]["code"] == "rate_limit_exceeded"
        assert post(fake.base_url + "/responses", {"model": "ratelimit"})[0] == 200, "only the first is limited"


async def test_a_broken_script_is_a_readable_server_error():
    def script(body, n):
        raise KeyError("no such step")

    with FakeVendor("chat", script) as fake:
        async with backend_for("openai-chat", fake, max_retries=0) as backend:
            with pytest.raises(BackendError, match="fake vendor script failed: KeyError"):
                await backend.complete([Message("user", [TextPart("go")])], [])


def test_an_unknown_kind_lists_the_known_ones():
    with pytest.raises(ValueError, match="anthropic, responses, chat, gemini"):
        FakeVendor("bedrock")
