"""The hf backend reads a reply with the tokenizer's own `response_template` (transformers' `parse_response`) when
it ships one: Gemma 4 writes `<|tool_call>call:NAME{key:<|"|>text<|"|>,...}<tool_call|>`, which the `<tool_call>`
parser never reads.

The template below is written here in Gemma 4's call syntax (as the transformers 5.24 parser's `json` dialect knobs
`unquoted_keys` and `string_delims` describe it) on the tiny Gemma 3 of test_hf.py, to test the mapping on its own;
test_hf_gemma4.py runs Gemma 4's real chat and response templates on a tiny Gemma 4 built from its real config.
"""

from __future__ import annotations

import pytest
from imagekit import gradient, png_bytes
from test_hf import SCHEMA, hf_backend, tiny_model  # noqa: F401  (tiny_model is a fixture)
from trompe_agents.backends.hf import template_calls
from trompe_agents.loop import run_agent
from trompe_agents.toolclient import ToolClient

GEMMA4_CALL = 'Let me look. <|tool_call>call:crop{image:<|"|>original<|"|>,box:[0,0,16,16]}<tool_call|>'
GEMMA4_STYLE = {
    "start_anchor": "<start_of_turn>model\n", "defaults": {"role": "assistant"},
    "fields": {
        "tool_calls": {"open_pattern": r"<\|tool_call>call:(?P<name>\w+)", "close": "<tool_call|>", "repeats": True,
                       "content": "json",
                       "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
                       "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}},
        "content": {"content": "text"}}}


async def answer(backend):
    async with ToolClient.in_process() as tools:
        return await run_agent(backend, tools, system="Inspect the image.", question="Is it dark?",
                               images={"original": png_bytes(gradient(64, 48))}, final_schema=SCHEMA,
                               allow=["crop"], max_rounds=2)


async def test_a_gemma4_call_is_read_by_the_tokenizers_own_template(tiny_model, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    backend = hf_backend(tiny_model, [GEMMA4_CALL, '{"answer": "yes"}'])
    backend.tokenizer.response_template = GEMMA4_STYLE
    result = await answer(backend)
    assert (result.stop, result.answer, result.tool_calls) == ("answer", {"answer": "yes"}, ["crop"])


async def test_without_a_template_the_same_reply_has_no_call(tiny_model, monkeypatch):  # noqa: F811
    """What the issue reported: 0 calls found, the call's text taken as prose."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    backend = hf_backend(tiny_model, [GEMMA4_CALL])
    from trompe_agents.messages import Message, TextPart

    turn = await backend.complete([Message("user", [TextPart("Is it dark?")])], [])
    assert turn.message.tool_calls == [] and "<|tool_call>call:crop" in turn.message.text


@pytest.mark.parametrize("reply, expected", [
    (GEMMA4_CALL, ("Let me look.", [("crop", {"image": "original", "box": [0, 0, 16, 16]})])),
    ("no call at all", ("no call at all", [])),
])
def test_template_calls_maps_parsed_calls_to_tool_calls(tiny_model, reply, expected):  # noqa: F811
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    tokenizer.response_template = GEMMA4_STYLE
    ids = tokenizer.encode(reply, add_special_tokens=False) + [tokenizer.eos_token_id]
    prose, calls = template_calls(tokenizer, ids, "<start_of_turn>model\n", [])
    assert (prose, [(c.name, c.arguments) for c in calls]) == expected
    assert [c.id for c in calls] == [f"call_{n}" for n in range(1, len(calls) + 1)]


def test_a_reply_the_template_cannot_read_is_left_to_the_tolerant_parser(tiny_model):  # noqa: F811
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    assert template_calls(tokenizer, [1, 2], "", []) is None  # no template at all
    tokenizer.response_template = GEMMA4_STYLE
    broken = tokenizer.encode('<|tool_call>call:crop{image:<|"|>orig', add_special_tokens=False)
    assert template_calls(tokenizer, broken, "<start_of_turn>model\n", []) is None
