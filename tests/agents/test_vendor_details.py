"""Vendor specifics users notice: credentials, base URLs, temperature, thought signatures, bad tool arguments."""

from __future__ import annotations

import asyncio
import base64
import gc

import anyio
import pytest
from test_vendor_roundtrip import SCHEMA, VENDORS, backend_for
from trompe_agents.backends.base import BackendOptions, MissingCredentials
from trompe_agents.backends.openai_chat import OpenAIChatBackend, OpenAIChatSettings
from trompe_agents.messages import ImagePart, Message, TextPart, ToolSchema
from trompe_agents.plugins import backend_names, create_backend
from trompe_agents.testing import Call, FakeVendor, Reply, call, final, tool_results

CROP = ToolSchema("crop", "Cut out a box.", {"type": "object", "properties": {"image": {"type": "string"}}})
KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL",
            "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL")
BACKEND_NAMES = {"claude": "claude", "openai": "openai", "openai-chat": "openai-chat", "gemini-3": "gemini",
                 "gemini-2.5": "gemini"}


@pytest.fixture
def no_keys(monkeypatch):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


def question() -> list[Message]:
    return [Message("system", [TextPart("Be brief.")]),
            Message("user", [TextPart("Look."), ImagePart("original", b"png")])]


@pytest.mark.parametrize("name, variable", [("claude", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY"),
                                            ("openai-chat", "OPENAI_API_KEY"), ("gemini", "GEMINI_API_KEY")])
def test_a_missing_key_is_one_line_naming_the_variable_and_the_keyless_backends(no_keys, name, variable):
    with pytest.raises(MissingCredentials) as info:
        create_backend(name, BackendOptions(model="m"))
    message = str(info.value)
    assert "\n" not in message and variable in message
    assert "function, replay, hf and openai-chat with --base-url" in message


def test_the_four_vendors_register_through_the_backend_hook():
    assert {"claude", "openai", "openai-chat", "gemini"} <= set(backend_names())


@pytest.mark.parametrize("label", list(VENDORS))
async def test_base_url_from_the_vendors_environment_variable(no_keys, monkeypatch, label):
    cls, kind, model = VENDORS[label]
    variable = {"anthropic": "ANTHROPIC_BASE_URL", "gemini": "GOOGLE_GEMINI_BASE_URL"}.get(kind, "OPENAI_BASE_URL")
    with FakeVendor(kind, [final("hello")]) as fake:
        monkeypatch.setenv(variable, fake.base_url)
        options = BackendOptions(model=model, api_key=None if label == "openai-chat" else "k")
        async with create_backend(BACKEND_NAMES[label], options) as backend:
            turn = await backend.complete(question(), [])
    assert turn.message.text == "hello" and len(fake.requests) == 1


async def test_openai_chat_with_a_base_url_needs_no_key(no_keys):
    with FakeVendor("chat", [final("ok")]) as fake:
        async with OpenAIChatBackend(BackendOptions(model="qwen3-vl", base_url=fake.base_url)) as backend:
            turn = await backend.complete(question(), [CROP])
    assert turn.message.text == "ok"
    request = fake.requests[0]
    assert request.headers["authorization"] == "Bearer not-needed"
    assert request.json["max_tokens"] == 4096 and "max_completion_tokens" not in request.json


# (label, model that takes temperature 0, model that takes none by default) from backends/catalogue.py
TEMPERATURE_MODELS = {"claude": ("claude-haiku-4-5", "claude-sonnet-5-5"), "openai": ("gpt-4.1-mini", "gpt-6.1-terra"),
                      "openai-chat": ("local-vlm", "gpt-6.1-terra"),
                      "gemini-3": ("gemini-2.5-flash-lite", "gemini-3-flash-preview"),
                      "gemini-2.5": ("gemini-2.5-flash-lite", "gemini-flash-latest")}


def _temperature(body: dict):
    return body.get("generationConfig", {}).get("temperature") if "contents" in body else body.get("temperature")


@pytest.mark.parametrize("label", list(VENDORS))
async def test_temperature_zero_goes_only_to_models_that_accept_it_and_is_recorded(label):
    takes, refuses = TEMPERATURE_MODELS[label]
    # Claude: API version 2026-10-21 (the SDK's default) refuses sampling parameters on every model
    pinned = {"anthropic_version": "2023-06-01"} if label == "claude" else {}
    with FakeVendor(VENDORS[label][1], [final("ok")]) as fake:
        async with backend_for(label, fake, model=takes, settings=pinned) as backend:
            turn = await backend.complete(question(), [CROP])
        async with backend_for(label, fake, model=refuses, settings=pinned) as backend:
            plain = await backend.complete(question(), [CROP])
    assert _temperature(fake.requests[0].json) == 0 and turn.sent["temperature"] == 0
    assert _temperature(fake.requests[1].json) is None and plain.sent["temperature"] is None
    if label == "claude":
        assert turn.sent["temperature_via"] == "extra_body" and plain.sent["temperature_via"] == "not sent"


async def test_claude_sends_no_temperature_under_the_sdks_default_api_version():
    with FakeVendor("anthropic", [final("ok")]) as fake:
        async with backend_for("claude", fake, model="claude-haiku-4-5") as backend:
            turn = await backend.complete(question(), [CROP])
    assert "temperature" not in fake.requests[0].json and turn.sent["temperature_via"] == "not sent"
    assert "anthropic-version" in fake.requests[0].headers  # the SDK's own (2026-10-21 or later)


@pytest.mark.parametrize("label", list(VENDORS))
async def test_a_model_that_refuses_temperature_gets_none_and_the_trace_says_so(label):
    with FakeVendor(VENDORS[label][1], [final("ok")]) as fake:
        async with backend_for(label, fake, model="notemp-gemini-3", settings={"temperature": 0}) as backend:
            first = await backend.complete(question(), [])
            second = await backend.complete(question(), [])
    assert first.message.text == second.message.text == "ok"
    assert "temperature" in first.sent["temperature_rejected"] and first.sent["temperature"] is None
    assert "temperature_rejected" not in second.sent
    assert [r.json.get("temperature", r.json.get("generationConfig", {}).get("temperature"))
            for r in fake.requests] == [0, None, None]


async def test_claude_temperature_can_be_left_out_and_the_api_version_pinned():
    with FakeVendor("anthropic", [final("ok")]) as fake:
        settings = {"temperature": None, "anthropic_version": "2023-06-01"}
        async with backend_for("claude", fake, settings=settings) as backend:
            turn = await backend.complete(question(), [])
    request = fake.requests[0]
    assert "temperature" not in request.json and request.headers["anthropic-version"] == "2023-06-01"
    assert turn.sent["temperature_via"] == "not sent" and turn.sent["anthropic_version"] == "2023-06-01"


async def test_gemini_thought_signatures_go_back_unchanged():
    state = b"\xfb\xff\xfe opaque thought state"
    signature = base64.b64encode(state).decode()  # standard alphabet, with '+' and '/'
    steps = [Reply(text="Let me look.", calls=[Call("crop", {"image": "original"}), Call("crop", {"image": "img_001"})],
                   thought_signature=signature), final("done")]
    with FakeVendor("gemini", steps) as fake:
        async with backend_for("gemini-3", fake) as backend:
            messages = question()
            turn = await backend.complete(messages, [CROP])
            messages.append(turn.message)
            messages += [Message("tool", [TextPart(f"img_00{i}")], tool_call_id=c.id, tool_name=c.name)
                         for i, c in enumerate(turn.message.tool_calls, 1)]
            await backend.complete(messages, [CROP])
    sent_back = _camel(fake.requests[1].json["contents"][1])
    echoed = sent_back["parts"][1].pop("thoughtSignature")
    assert base64.urlsafe_b64decode(echoed) == state, "same bytes (the SDK may use the URL-safe alphabet)"
    assert sent_back == {"role": "model", "parts": [
        {"text": "Let me look."},
        {"functionCall": {"id": "fc-0-0", "name": "crop", "args": {"image": "original"}}},
        {"functionCall": {"id": "fc-0-1", "name": "crop", "args": {"image": "img_001"}}}]}
    responses = [p["functionResponse"] for p in fake.requests[1].json["contents"][2]["parts"]]
    assert [(r["id"], r["response"]) for r in responses] == [("fc-0-0", {"output": "img_001"}),
                                                             ("fc-0-1", {"output": "img_002"})]


async def test_gemini_tool_calls_with_a_final_schema_print_no_sdk_warning(monkeypatch, caplog):
    """The SDK warns once per process about "non-text parts" when a reply with a response schema is a tool call."""
    from google.genai import types

    monkeypatch.setattr(types, "_response_text_non_text_warning_logged", False)
    with FakeVendor("gemini", [call("crop", image="original")]) as fake:
        async with backend_for("gemini-3", fake) as backend:
            turn = await backend.complete(question(), [CROP], final_schema=SCHEMA)
    assert turn.sent["final_format"] == "native" and turn.message.tool_calls[0].name == "crop"
    assert not [r for r in caplog.records if "non-text parts" in r.getMessage()]


@pytest.mark.parametrize("label", ["openai", "openai-chat"])
async def test_malformed_tool_arguments_surface_as_none_with_the_raw_text(label):
    raw = '{"image": "original", "box": [0, 0'
    with FakeVendor(VENDORS[label][1], [call("crop", raw=raw), final("ok")]) as fake:
        async with backend_for(label, fake) as backend:
            turn = await backend.complete(question(), [CROP])
            [bad] = turn.message.tool_calls
            assert (bad.name, bad.arguments, bad.raw_arguments) == ("crop", None, raw)
            error = Message("tool", [TextPart("error: not valid JSON")], tool_call_id=bad.id, tool_name="crop",
                            is_error=True)
            await backend.complete([*question(), turn.message, error], [CROP])
    echoed = fake.requests[1].json
    calls = [i for i in echoed.get("input", []) if i.get("type") == "function_call"] or \
        [c["function"] for m in echoed.get("messages", []) for c in m.get("tool_calls", [])]
    assert calls[0]["arguments"] == raw, "the model sees exactly what it sent"


@pytest.mark.parametrize("label, schema_ok, tools, native", [
    ("claude", True, True, True), ("claude", False, True, False),
    ("openai", True, True, True), ("openai", False, True, False),
    ("openai-chat", True, True, False),  # a local server's guided decoding would forbid tool calls
    ("openai-chat", True, False, True),
    ("gemini-3", True, True, True), ("gemini-2.5", True, True, False), ("gemini-2.5", True, False, True)])
async def test_native_structured_output_only_where_it_combines_with_tools(label, schema_ok, tools, native):
    schema = SCHEMA if schema_ok else {"type": "object", "properties": {"answer": {"type": "string"}}}
    with FakeVendor(VENDORS[label][1], [final('{"answer": "yes"}')]) as fake:
        async with backend_for(label, fake) as backend:
            turn = await backend.complete(question(), [CROP] if tools else [], final_schema=schema)
    body = fake.requests[0].json
    constrained = ("output_config" in body or "text" in body or "response_format" in body
                   or "responseJsonSchema" in body.get("generationConfig", {}))
    assert constrained == native and turn.sent["final_format"] == ("native" if native else "parser")


def _camel(value):
    """Gemini's wire JSON as the fake received it, keys normalised to camelCase for comparison."""
    if isinstance(value, dict):
        return {_camel_key(k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w.title() for w in rest)


@pytest.mark.parametrize("value", ["hot", 3, -0.5])
def test_a_bad_temperature_option_names_the_accepted_range(value):
    with pytest.raises(ValueError, match=r"temperature=.*: expected a number from 0 to 2, or none"):
        OpenAIChatSettings(temperature=value)


@pytest.mark.parametrize("label", list(VENDORS))
async def test_a_failed_tool_reaches_the_model_marked_as_an_error(label):
    kind = VENDORS[label][1]
    with FakeVendor(kind, [call("zoom", factor=2), final("ok")]) as fake:
        async with backend_for(label, fake) as backend:
            turn = await backend.complete(question(), [CROP])
            [bad] = turn.message.tool_calls
            failed = Message("tool", [TextPart("unknown tool 'zoom'; available: crop")], tool_call_id=bad.id,
                             tool_name=bad.name, is_error=True)
            await backend.complete([*question(), turn.message, failed], [CROP])
    [result] = tool_results(kind, fake.requests[1].json)
    text = {"anthropic": lambda r: r["content"][0]["text"], "responses": lambda r: r["output"][0]["text"],
            "chat": lambda r: r["content"], "gemini": lambda r: r["response"]["error"]}[kind](result)
    assert text == "error: unknown tool 'zoom'; available: crop"
    if kind == "anthropic":
        assert result["is_error"] is True


async def test_another_backends_assistant_turn_is_translated_not_echoed():
    """A conversation may change vendor (e.g. a fallback backend): only a backend's own payload goes back raw."""
    with FakeVendor("anthropic", [call("crop", image="original")]) as claude_api, \
            FakeVendor("gemini", [final("ok")]) as gemini_api:
        async with backend_for("claude", claude_api) as claude, backend_for("gemini-2.5", gemini_api) as gemini:
            turn = await claude.complete(question(), [CROP])
            [tool_call] = turn.message.tool_calls
            result = Message("tool", [TextPart("img_001")], tool_call_id=tool_call.id, tool_name="crop")
            await gemini.complete([*question(), turn.message, result], [CROP])
    model_turn = gemini_api.requests[0].json["contents"][1]
    assert model_turn == {"role": "model", "parts": [
        {"functionCall": {"id": tool_call.id, "name": "crop", "args": {"image": "original"}}}]}


@pytest.mark.parametrize("label", list(VENDORS))
def test_a_backend_left_open_does_not_break_the_next_event_loop(label):
    """Apps that never close a backend must not get errors in a later event loop when it is collected."""
    errors = []
    with FakeVendor(VENDORS[label][1], [final("ok")]) as fake:
        backend = backend_for(label, fake)
        assert anyio.run(backend.complete, question(), []).message.text == "ok"
        del backend

        async def later():
            asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
            gc.collect()
            await anyio.sleep(0.05)

        anyio.run(later)
    assert errors == []


@pytest.mark.parametrize("label", list(VENDORS))
def test_one_backend_serves_successive_event_loops(label):
    """Sync callers may run each sample in its own event loop; connections never leak across loops."""
    with FakeVendor(VENDORS[label][1], [final("ok")]) as fake:
        backend = backend_for(label, fake)
        turns = [anyio.run(backend.complete, question(), []) for _ in range(2)]
    assert [t.message.text for t in turns] == ["ok", "ok"] and len(fake.requests) == 2
    assert not any("retries" in t.sent for t in turns)
