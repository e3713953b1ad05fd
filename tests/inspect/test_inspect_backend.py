"""The pieces between trompe and Inspect: tool schemas as Inspect ToolInfo (no `$ref` left), trompe messages as
Inspect messages (images after their ids, errors flagged), Inspect output as a trompe turn."""

from __future__ import annotations

import json

import pytest

from trompe_agents.messages import ImagePart, Message, TextPart, ToolCall
from trompe_agents.toolclient import ToolClient


async def test_every_server_tool_is_an_inspect_tool_without_refs():
    from trompe.schemas import tool_info

    async with ToolClient.in_process() as tools:
        schemas = await tools.list_tools()
    infos = {s.name: tool_info(s) for s in schemas}
    dumped = {name: json.dumps(info.parameters.model_dump(exclude_none=True)) for name, info in infos.items()}
    assert "$ref" not in "".join(dumped.values()) and "session" not in "".join(
        json.dumps(list(i.parameters.properties)) for i in infos.values())
    crops = infos["compare_crops"].parameters.properties["crops"]
    assert set(crops.items.properties) == {"image", "box"}  # the Region model, inlined from $defs


def test_an_unknown_ref_is_refused():
    from trompe.schemas import inline_refs

    assert inline_refs({"$defs": {"A": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/A"}}}) == {
        "properties": {"a": {"type": "string"}}}
    with pytest.raises(ValueError, match="has no definition"):
        inline_refs({"properties": {"a": {"$ref": "#/$defs/B"}}})


def test_messages_keep_image_ids_and_errors():
    from inspect_ai.model import ContentImage

    from trompe.backend import to_inspect

    png = b"\x89PNG fake"
    messages = [Message("system", [TextPart("rules")]),
                Message("user", [TextPart("question"), ImagePart("original", png)]),
                Message("assistant", [], [ToolCall("c1", "crop", {"image": "original"})]),
                Message("tool", [TextPart("img_001: crop"), ImagePart("img_001", png)], tool_call_id="c1",
                        tool_name="crop"),
                Message("tool", [TextPart("no such image")], tool_call_id="c2", tool_name="crop", is_error=True)]
    system, user, assistant, result, refused = to_inspect(messages)
    assert system.text == "rules" and [c.type for c in user.content] == ["text", "image"]
    assert assistant.tool_calls[0].function == "crop" and assistant.tool_calls[0].arguments == {"image": "original"}
    assert [c.text if c.type == "text" else c.image[:22] for c in result.content] == [
        "img_001: crop", "img_001:", "data:image/png;base64,"]
    assert isinstance(result.content[2], ContentImage) and result.error is None
    assert refused.error.message == "error: no such image" and refused.tool_call_id == "c2"


def test_unparsed_arguments_reach_the_loop_as_none():
    from inspect_ai.model import ModelOutput
    from inspect_ai.tool import ToolCall as InspectToolCall

    from trompe.backend import to_turn

    output = ModelOutput.for_tool_call("m", "crop", {})
    output.message.tool_calls = [InspectToolCall("c1", "crop", {}, parse_error="Expecting value")]
    turn = to_turn(output, "m")
    assert turn.message.tool_calls[0].arguments is None  # the loop tells the model its JSON did not parse
    assert turn.message.vendor is output.message  # echoed back unchanged on the next turn
